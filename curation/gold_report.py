"""Presenting a :class:`~stereoset_eval.curation.gold_eval.GoldReport`: disagreement kinds, card section, files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from stereoset_eval.curation.gold_eval import GoldReport


def disagreement_kinds(report: GoldReport, top: int = 10) -> pd.DataFrame:
    """The largest kinds of disagreement: (dataset, kind, gold, ours, deciding rule) counted."""
    d = report.disagreements
    if d.empty:
        return pd.DataFrame(columns=["dataset", "kind", "gold", "ours", "rule", "n"])
    rule = d["decided_by"].str.split(":").str[:2].str.join(":").str.slice(0, 60)
    gold = d["gold"].where(d["kind"].isin(["item", "dimension"]), d["gold"].str.split(":").str[0].str.slice(0, 30))
    ours = d["ours"].where(d["kind"] != "pair_text", "different text")
    gold = gold.where(d["kind"] != "pair_text", "different text")
    gold = gold.where(d["kind"] != "item", d["gold"].str.slice(0, 40))
    kinds = pd.DataFrame({"dataset": d["dataset"], "kind": d["kind"], "gold": gold, "ours": ours,
                          "rule": rule.where(d["kind"].isin(["item", "instance"]), "")})
    out = kinds.value_counts().rename("n").reset_index()
    return out.head(top)


def _md_table(df: pd.DataFrame) -> str:
    cols = list(df.columns)
    lines = ["| " + " | ".join(map(str, cols)) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    lines += ["| " + " | ".join(str(v).replace("|", "\\|") for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def gold_markdown(report: GoldReport, *, gold_name: str) -> str:
    """The card section: agreement table, per-fold table, confusion matrices, top disagreements."""
    parts = [f"## Agreement with an expert gold (`{gold_name}`)", "",
             "Measured by `stereoset_eval.curation.gold_eval` over the gold's items that this version decided "
             "(automatically or in review; items waiting for a person are counted in `items_waiting_for_review`): "
             "item κ: keep/remove; instance κ: keep/drop of the instances of items both keep; dimension κ and exact "
             "pair: instances both keep. Items of the gold that were also this run's reviewed items agree by "
             "construction: the figures that count are the cross-fitted and held-out tables of "
             "`stereoset-eval curate-eval` (docs/curation.md).",
             "", _md_table(report.table)]
    if not report.per_fold.empty:
        parts += ["", "Per hash fold of the gold (`fold_of(source_id)`):", "", _md_table(report.per_fold)]
    for d, c in report.confusion.items():
        parts += ["", f"Dimension confusion, {d} (rows gold, columns ours):", "", _md_table(c.reset_index())]
    kinds = disagreement_kinds(report)
    if not kinds.empty:
        parts += ["", "Largest kinds of disagreement (every one is in `gold_eval/disagreements.csv`):", "",
                  _md_table(kinds)]
    return "\n".join(parts) + "\n"


def write_report(report: GoldReport, dest: str | Path) -> Path:
    """Write ``summary.csv``, ``per_fold.csv``, ``confusion_<dataset>.csv``, ``disagreements.csv``."""
    from stereoset_eval.foundation.atomic import atomic_directory

    dest = Path(dest)
    with atomic_directory(dest) as tmp:
        _write(report.table, tmp / "summary.csv")
        _write(report.per_fold, tmp / "per_fold.csv")
        for d, c in report.confusion.items():
            _write(c.reset_index(), tmp / f"confusion_{d}.csv")
        _write(report.disagreements, tmp / "disagreements.csv")
    return dest


def _write(df: pd.DataFrame, dest: Path) -> None:
    from stereoset_eval.foundation.atomic import atomic_path

    with atomic_path(dest, suffix=".csv") as tmp:
        df.to_csv(tmp, index=False, lineterminator="\n")
