"""Write a curated version: HF ``datasets`` folder, CSV, parquet, card, rule and removed tables.

Layout of the output directory (built under a temporary name and swapped into place by
:func:`stereoset_eval.foundation.outputs.output_folder`, so a crash never leaves half a version, and
an existing folder is replaced only if it is an earlier ``curate`` output)::

    README.md              dataset card (counts, provenance, license, rules version); its YAML
                           ``configs:`` block makes ``datasets.load_dataset(<folder>)`` read pairs.parquet
    pairs.csv              BMNE columns + provenance columns (one row per curated pair)
    pairs.parquet          the same table, the same column types (:mod:`.export_schema`)
    hf_dataset/            datasets.DatasetDict({"train": ...}).save_to_disk of the same table
    lm_eval_task/          an lm-evaluation-harness task over pairs.parquet (YAML + utils.py)
    rules_summary.csv      the rule registry's table over the source pairs (kind, effect, stage, flagged)
    rules_summary_curated.csv   rule table of the curated pairs
    removed.csv            every pair / instance left out, with the rule, reason, decided_by and confidence
    review_items.jsonl     the review queue: every candidate of the items a person must decide, with the
                           suggestion and evidence, ordered by what a decision would change
                           (``stereoset-eval annotate push --items`` makes Label Studio tasks of them)
    reliability.csv        the reliability estimate of every rule the run used (n, agreement, mean, lower bound)
    decision_records.jsonl every source item's proposed decisions with their rules (curate-eval cross-fits on it)
    statistics/            lengths.csv, jaccard.csv, counts.csv, categories.csv,
                           categories.png, statistics.json
    provenance.json        tool and rules version, lexicon sha256, config, input files

No timestamps are written, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from stereoset_eval.foundation.atomic import atomic_directory, atomic_path, atomic_write_json, atomic_write_text
from stereoset_eval.foundation.outputs import output_folder
from stereoset_eval.curation.dimensions import NEEDS_ANNOTATION, tag_of
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.pairs import INSTANCE_SEPARATOR, origin_of
from stereoset_eval.curation.rules import RULES

from stereoset_eval.curation.export_schema import BMNE_COLUMNS, COLUMNS, hf_features, typed_frame
from stereoset_eval.curation.lm_eval_task import write_lm_eval_task

PROVENANCE_COLUMNS: tuple[str, ...] = COLUMNS[len(BMNE_COLUMNS):]
SPLIT = "train"  #: the one split of the exported dataset (as the BMNE release on the hub)
INSTANCE_KINDS = {"": "as-is", "m": "sent_more attribute", "l": "sent_less attribute"}


def _json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def pairs_frame(items: Sequence[Item], decided: Mapping[str, tuple[str, float | None]] | None = None) -> pd.DataFrame:
    """One row per curated item in the BMNE column schema plus provenance columns (typed, see SCHEMA).

    ``decided``: item id -> (``decided_by``, ``confidence``) of the run's routing (empty when absent).
    """
    decided = decided or {}
    rows = []
    for it in items:
        src, src_id = origin_of(it)
        suffix = it.id.split(INSTANCE_SEPARATOR, 1)[1] if INSTANCE_SEPARATOR in it.id else ""
        tag = tag_of(it)
        p = it.provenance
        rows.append({
            "sent_more": it.text("sent_more"),
            "sent_less": it.text("sent_less"),
            "stereo_antistereo": it.direction or "",
            "bias_type": it.bias_type,
            "category": it.dimension or "",
            "id": it.id,
            "source": src,
            "source_id": src_id,
            "instance": INSTANCE_KINDS.get(suffix, suffix),
            "target": it.target or "",
            "pitfalls": ";".join(sorted({f.rule for f in it.flags if f.rule in RULES or f.rule == NEEDS_ANNOTATION})),
            "tag_source": tag.source if tag else "",
            "dimension_evidence": _json([dict(h) for h in tag.evidence]) if tag else "[]",
            "edits": _json([e.to_dict() for e in p.edits]),
            "sentence_origins": _json(dict(p.sentence_origins)),
            "item_flags": _json([f.to_dict() for f in it.flags]),
            "source_file": Path(p.source_file).name,
            "source_sha256": p.sha256,
            "source_row": p.row,
            "source_format": p.format,
            "decided_by": decided.get(it.id, ("", None))[0],
            "confidence": decided.get(it.id, ("", None))[1],
        })
    return typed_frame(rows)


def write_csv(df: pd.DataFrame, dest: Path) -> None:
    """``df`` as CSV, atomically; a text cell a spreadsheet would run as a formula gets a leading
    apostrophe (:mod:`stereoset_eval.foundation.csv_safe`; parquet, HF and JSON keep the exact text)."""
    from stereoset_eval.foundation.csv_safe import safe_frame

    with atomic_path(dest, suffix=".csv") as tmp:
        safe_frame(df).to_csv(tmp, index=False, lineterminator="\n")


def write_parquet(df: pd.DataFrame, dest: Path) -> None:
    with atomic_path(dest, suffix=".parquet") as tmp:
        df.to_parquet(tmp, index=False)


def write_hf_dataset(df: pd.DataFrame, dest: Path) -> None:
    """``datasets.DatasetDict({"train": …}).save_to_disk`` of ``df`` with the export's column types, atomically."""
    import datasets

    datasets.disable_progress_bars()
    columns = {c: [None if pd.isna(v) else v for v in df[c].astype(object)] for c in df.columns}
    ds = datasets.DatasetDict({SPLIT: datasets.Dataset.from_dict(columns, features=hf_features())})
    with atomic_directory(dest) as tmp:
        ds.save_to_disk(str(tmp))


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(df.to_json(orient="records", double_precision=10))


def write_curation(result: Any, output: str | Path, *, card: str, gold_report: Any = None) -> Path:
    """Write every artefact of a :class:`~stereoset_eval.curation.pipeline.CurationResult` to ``output``.

    ``gold_report`` (a :class:`~stereoset_eval.curation.gold_eval.GoldReport`) adds ``gold_eval/``.
    """
    output = Path(output)
    decided = getattr(getattr(result, "applied", None), "decided", None) or getattr(result, "decided", None)
    frame = pairs_frame(result.items, decided)
    with output_folder(output, command="curate") as tmp:
        atomic_write_text(tmp / "README.md", card)
        write_csv(frame, tmp / "pairs.csv")
        write_parquet(frame, tmp / "pairs.parquet")
        write_hf_dataset(frame, tmp / "hf_dataset")
        write_lm_eval_task(tmp / "lm_eval_task")
        write_csv(result.rule_summary, tmp / "rules_summary.csv")
        write_csv(result.instance_rule_summary, tmp / "rules_summary_curated.csv")
        write_csv(result.removed_table(), tmp / "removed.csv")
        from stereoset_eval.curation.labelstudio.items_io import write_items_jsonl

        review = result.review_items() if hasattr(result, "review_items") else []
        write_items_jsonl(tmp / "review_items.jsonl", review)
        if hasattr(result, "reliability_table"):
            write_csv(result.reliability_table(), tmp / "reliability.csv")
            from stereoset_eval.curation.record_io import write_records

            write_records(tmp / "decision_records.jsonl", result.records)
        stats = tmp / "statistics"
        for name in ("lengths", "jaccard", "counts", "categories"):
            write_csv(getattr(result, name), stats / f"{name}.csv")
        atomic_write_json(stats / "statistics.json", {
            name: _records(getattr(result, name)) for name in ("lengths", "jaccard", "counts", "categories")
        })
        from stereoset_eval.curation.stats import category_chart

        category_chart(result.categories, stats / "categories.png")
        atomic_write_json(tmp / "provenance.json", result.provenance)
        if gold_report is not None:
            from stereoset_eval.curation.gold_report import write_report

            write_report(gold_report, tmp / "gold_eval")
    return output

