"""Agreement of a curated version with an expert gold annotation (the ``curation-gold`` schema).

The gold (``../shared/data/curation-gold/gold_dev.csv``, see its GUIDELINES.md) has one row per
curated instance of a source item (``m``, ``l`` or ``as_is``; a removed item has one row with an
empty instance). A curated version is read as its ``pairs.csv`` (kept instances, ``id`` =
``<source>/<source_id>`` plus ``#m``/``#l``) and ``removed.csv`` (``item_id``, ``status``, ``rule``,
``reason``). Only items present in the gold are compared, and only those the version decided (an item
waiting for review has no row in either table; it is counted in ``items_waiting_for_review``). Per
benchmark:

* **item κ** — keep/remove of the whole source item (ours: kept when any instance is in
  ``pairs.csv``); Cohen's κ over the gold's items.
* **instance κ** — keep/drop of each instance slot of the items *both* keep (slots = the union
  of the gold's and our instance names for the item), so it measures the instance decision apart
  from the item decision.
* **dimension κ** — the four dimensions (ours may be ``needs annotation``) over instances both
  keep, with the confusion matrix.
* **exact pair** — share of instances both keep whose ``(sent_more, sent_less)`` equals the
  gold's (surrounding whitespace aside).
* **counts** — curated instances here vs in the gold.

A benchmark of the gold that the version did not curate at all is left out of the comparison.

Every disagreement is listed with the rule that decided ours (``removed.csv``'s rule, or the
kept instance's pitfalls) and the gold's note, so a maintainer can read why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from stereoset_eval.foundation.errors import StereosetEvalError

GOLD_COLUMNS: tuple[str, ...] = (
    "dataset", "source_id", "decision", "remove_reason", "pitfalls", "instance", "instance_status",
    "drop_reason", "sent_more", "sent_less", "dimension", "swap_labels", "confidence", "note",
)
DATASET_SOURCE: dict[str, str] = {"stereoset": "stereoset-intra", "crows": "crows-pairs"}
NO_DIMENSION = "needs annotation"

class GoldFormatError(StereosetEvalError):
    """A gold file that does not follow the curation-gold schema."""


def cohen_kappa(a: list[Any], b: list[Any]) -> float:
    """Cohen's κ of two equally long label lists (NaN when chance agreement is 1).

    >>> cohen_kappa(["k", "k", "r", "r"], ["k", "k", "r", "k"])
    0.5
    """
    if len(a) != len(b):
        raise ValueError("kappa needs two label lists of the same length")
    n = len(a)
    if n == 0:
        return float("nan")
    observed = sum(x == y for x, y in zip(a, b)) / n
    labels = set(a) | set(b)
    expected = sum((a.count(lab) / n) * (b.count(lab) / n) for lab in labels)
    if expected >= 1.0:
        return float("nan")
    return round((observed - expected) / (1.0 - expected), 4)


def item_key(dataset: str, source_id: str) -> str:
    """Our item id for a gold ``(dataset, source_id)`` (``crows:9`` → ``crows-pairs/crows:9``)."""
    source = DATASET_SOURCE[dataset]
    return source_id if source_id.startswith(source + "/") else f"{source}/{source_id}"


def load_gold(path: str | Path) -> pd.DataFrame:
    """Read and check a gold CSV; a bad file raises one line naming file, row and problem."""
    path = Path(path)
    if not path.is_file():
        raise GoldFormatError(f"{path}: gold file not found")
    try:  # an empty file, a non-UTF-8 file, a quote never closed (found by tests/test_fuzz_readers.py)
        df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise GoldFormatError(f"{path}: not a gold CSV file: {' '.join(str(exc).split())}") from None
    missing = [c for c in GOLD_COLUMNS if c not in df.columns]
    if missing:
        raise GoldFormatError(f"{path}: missing column(s) {', '.join(missing)}")
    for i, row in df.iterrows():
        line = int(i) + 2  # header is line 1
        if row["dataset"] not in DATASET_SOURCE:
            raise GoldFormatError(f"{path}:{line}: dataset {row['dataset']!r} is not one of {sorted(DATASET_SOURCE)}")
        if row["decision"] not in ("keep", "remove"):
            raise GoldFormatError(f"{path}:{line}: decision {row['decision']!r} is not keep/remove")
        if row["decision"] == "keep" and row["instance"] not in ("m", "l", "as_is"):
            raise GoldFormatError(f"{path}:{line}: a kept item needs instance m, l or as_is, got {row['instance']!r}")
    df["item"] = [item_key(d, s) for d, s in zip(df["dataset"], df["source_id"])]
    return df


def _split_id(item_id: str) -> tuple[str, str]:
    base, _, suffix = item_id.partition("#")
    return base, suffix or "as_is"


@dataclass
class GoldReport:
    """The agreement figures, confusion matrices and disagreements of one comparison."""

    table: pd.DataFrame
    confusion: dict[str, pd.DataFrame]
    disagreements: pd.DataFrame
    per_fold: pd.DataFrame = field(default_factory=pd.DataFrame)

    def metric(self, dataset: str, name: str) -> float:
        row = self.table[self.table["dataset"] == dataset]
        return float(row[name].iloc[0])


def _ours(pairs: pd.DataFrame, removed: pd.DataFrame) -> tuple[dict, dict, dict]:
    """``kept[(item, inst)] -> row``, ``dropped[(item, inst)] -> (status, rule, reason)``, item rules."""
    kept: dict[tuple[str, str], dict] = {}
    for row in pairs.fillna("").to_dict("records"):
        kept[_split_id(str(row["id"]))] = row
    dropped: dict[tuple[str, str], tuple[str, str, str]] = {}
    item_rule: dict[str, tuple[str, str, str]] = {}
    for row in removed.fillna("").to_dict("records"):
        base, inst = _split_id(str(row["item_id"]))
        rec = (str(row["status"]), str(row.get("rule", "")), str(row.get("reason", "")))
        if "#" in str(row["item_id"]):
            dropped[(base, inst)] = rec
        else:
            item_rule[base] = rec
    return kept, dropped, item_rule


def _decided_by(key: tuple[str, str], kept: dict, dropped: dict, item_rule: dict) -> str:
    if key in kept:
        p = kept[key].get("pitfalls", "")
        return f"kept ({p})" if p else "kept"
    if key in dropped:
        s, r, why = dropped[key]
        return f"{s}: {r or '-'}: {why}"
    if key[0] in item_rule:
        s, r, why = item_rule[key[0]]
        return f"{s}: {r or '-'}: {why}"
    return "not produced"


def _evaluate_one(gold: pd.DataFrame, kept: dict, dropped: dict, item_rule: dict,
                  dataset: str) -> tuple[dict[str, Any], pd.DataFrame, list[dict]]:
    g = gold[gold["dataset"] == dataset]
    decided = {k[0] for k in kept} | {k[0] for k in dropped} | set(item_rule)
    # an item that waits for a person (no automatic row) is not compared: it is counted apart
    waiting = [it for it in dict.fromkeys(g["item"]) if it not in decided]
    items = [it for it in dict.fromkeys(g["item"]) if it in decided]
    ours_items = {k[0] for k in kept}
    gold_keep = {it: (g[g["item"] == it]["decision"].iloc[0] == "keep") for it in items}
    dis: list[dict] = []
    note_of = {(r["item"], r["instance"] or "as_is"): r["note"] for r in g.to_dict("records")}
    for it in items:
        ours = it in ours_items
        if ours != gold_keep[it]:
            dis.append({"dataset": dataset, "item": it, "instance": "", "kind": "item",
                        "gold": "keep" if gold_keep[it] else "remove:" + g[g["item"] == it]["remove_reason"].iloc[0],
                        "ours": "keep" if ours else "remove",
                        "decided_by": "; ".join(_decided_by(k, kept, dropped, item_rule)
                                                for k in sorted({*kept, *dropped}) if k[0] == it)
                        or _decided_by((it, "as_is"), kept, dropped, item_rule),
                        "gold_note": g[g["item"] == it]["note"].iloc[0]})
    both = [it for it in items if gold_keep[it] and it in ours_items]
    inst_gold, inst_ours, dim_gold, dim_ours, exact = [], [], [], [], []
    for it in both:
        gi = g[(g["item"] == it) & (g["instance"] != "")]
        gold_inst = {r["instance"]: r for r in gi.to_dict("records")}
        slots = sorted(set(gold_inst) | {k[1] for k in kept if k[0] == it} |
                       {k[1] for k in dropped if k[0] == it and k[1] in ("m", "l")})
        for s in slots:
            gk = s in gold_inst and gold_inst[s]["instance_status"] == "kept"
            ok = (it, s) in kept
            inst_gold.append(gk)
            inst_ours.append(ok)
            if gk != ok:
                dis.append({"dataset": dataset, "item": it, "instance": s, "kind": "instance",
                            "gold": "kept" if gk else "dropped: " + (gold_inst[s]["drop_reason"] if s in gold_inst else "no such instance"),
                            "ours": "kept" if ok else "dropped",
                            "decided_by": _decided_by((it, s), kept, dropped, item_rule),
                            "gold_note": note_of.get((it, s), "")})
            if gk and ok:
                gr, orow = gold_inst[s], kept[(it, s)]
                od = orow.get("category", "") or NO_DIMENSION
                dim_gold.append(gr["dimension"])
                dim_ours.append(od)
                if od != gr["dimension"]:
                    dis.append({"dataset": dataset, "item": it, "instance": s, "kind": "dimension",
                                "gold": gr["dimension"], "ours": od,
                                "decided_by": str(orow.get("dimension_evidence", ""))[:300],
                                "gold_note": gr["note"]})
                same = (str(orow["sent_more"]).strip(), str(orow["sent_less"]).strip()) == \
                    (gr["sent_more"].strip(), gr["sent_less"].strip())
                exact.append(same)
                if not same:
                    dis.append({"dataset": dataset, "item": it, "instance": s, "kind": "pair_text",
                                "gold": f"{gr['sent_more']} || {gr['sent_less']}",
                                "ours": f"{orow['sent_more']} || {orow['sent_less']}",
                                "decided_by": "edits " + str(orow.get("edits", ""))[:300],
                                "gold_note": gr["note"]})
    ours_count = sum(1 for k in kept if k[0] in gold_keep)
    gold_count = int((g["instance_status"] == "kept").sum())
    row = {
        "dataset": dataset,
        "items": len(items),
        "items_waiting_for_review": len(waiting),
        "items_kept_gold": sum(gold_keep.values()),
        "items_kept_ours": sum(1 for it in items if it in ours_items),
        "item_kappa": cohen_kappa([gold_keep[it] for it in items], [it in ours_items for it in items]),
        "instance_slots": len(inst_gold),
        "instance_kappa": cohen_kappa(inst_gold, inst_ours),
        "instances_both_keep": len(dim_gold),
        "dimension_kappa": cohen_kappa(dim_gold, dim_ours),
        "exact_pairs": sum(exact),
        "exact_pair_rate": round(sum(exact) / len(exact), 4) if exact else float("nan"),
        "instances_ours": ours_count,
        "instances_gold": gold_count,
        "count_ratio_error": round(abs(ours_count - gold_count) / gold_count, 4) if gold_count else float("nan"),
    }
    labels = sorted(set(dim_gold) | set(dim_ours))
    conf = pd.crosstab(pd.Series(dim_gold, name="gold", dtype=object), pd.Series(dim_ours, name="ours", dtype=object))
    conf = conf.reindex(index=labels, columns=labels, fill_value=0) if labels else conf
    return row, conf, dis


def fold_of(source_id: str, folds: int = 2) -> int:
    """A stable fold (0..folds-1) from a hash of ``source_id`` (for design/check splits)."""
    import hashlib

    return int(hashlib.sha256(source_id.encode("utf-8")).hexdigest(), 16) % folds


def evaluate(pairs: pd.DataFrame, removed: pd.DataFrame, gold: pd.DataFrame, *, folds: int = 2) -> GoldReport:
    """Agreement of a curated version (``pairs``, ``removed`` tables) with ``gold`` (:func:`load_gold`).

    ``folds`` > 1 adds :attr:`GoldReport.per_fold`: the same table on each hash fold of the gold.
    """
    for name, df, cols in (("pairs", pairs, ("id", "sent_more", "sent_less", "category")),
                           ("removed", removed, ("item_id", "status"))):
        miss = [c for c in cols if c not in df.columns]
        if miss:
            raise GoldFormatError(f"{name} table lacks column(s) {', '.join(miss)}")
    kept, dropped, item_rule = _ours(pairs, removed)
    rows, conf, dis = [], {}, []
    curated_sources = {k[0].split("/", 1)[0] for k in [*kept, *dropped]} | {k.split("/", 1)[0] for k in item_rule}
    # a benchmark the version did not curate at all is not compared (it is not a disagreement)
    datasets = [d for d, src in DATASET_SOURCE.items() if d in set(gold["dataset"]) and src in curated_sources]
    for d in datasets:
        row, c, di = _evaluate_one(gold, kept, dropped, item_rule, d)
        rows.append(row)
        conf[d] = c
        dis.extend(di)
    per_fold = []
    if folds > 1:
        fold = gold["source_id"].map(lambda s: fold_of(s, folds))
        for k in range(folds):
            sub = gold[fold == k]
            for d in datasets:
                if (sub["dataset"] == d).any():
                    per_fold.append({"fold": k, **_evaluate_one(sub, kept, dropped, item_rule, d)[0]})
    dis_df = pd.DataFrame(dis, columns=["dataset", "item", "instance", "kind", "gold", "ours", "decided_by", "gold_note"])
    return GoldReport(pd.DataFrame(rows), conf, dis_df, pd.DataFrame(per_fold))


def evaluate_output(output: str | Path, gold_path: str | Path, *, folds: int = 2) -> GoldReport:
    """:func:`evaluate` of a ``curate`` output directory (its ``pairs.csv`` and ``removed.csv``)."""
    output = Path(output)
    tables = {}
    for name in ("pairs.csv", "removed.csv"):
        p = output / name
        if not p.is_file():
            raise GoldFormatError(f"{output}: no {name} (not a curate output directory?)")
        tables[name] = pd.read_csv(p, dtype=str, keep_default_na=False)
    return evaluate(tables["pairs.csv"], tables["removed.csv"], load_gold(gold_path), folds=folds)
