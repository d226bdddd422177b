"""A reviewed curated version: the merged items written through :mod:`stereoset_eval.curation.export`.

``stereoset-eval annotate merge`` writes the same layout as ``stereoset-eval curate``
(dataset card, ``pairs.csv`` / ``pairs.parquet`` in the BMNE schema, ``hf_dataset/``, rule
tables, ``removed.csv``, ``statistics/``, ``provenance.json``) plus ``review/`` (the files
of :func:`stereoset_eval.curation.labelstudio.report.write_review`); the card carries the review section
(agreement, disagreements, adjudication rule). Everything is built in one temporary folder
and swapped into place, so a crash leaves the previous version.

When the reviewed items come from a ``curate`` folder, its ``provenance.json`` and
``removed.csv`` are carried over: the new ``removed.csv`` lists what curation left out
(``stage`` = curation) and what the review removed (``stage`` = review).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from stereoset_eval import __version__
from stereoset_eval.foundation.outputs import output_folder
from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.labelstudio.annotations import ParsedExport
from stereoset_eval.curation.labelstudio.items_io import VERSION_PAIR_FILES
from stereoset_eval.curation.labelstudio.merge import REVIEW_FLAG, MergeResult
from stereoset_eval.curation.pairs import origin_of, origin_source
from stereoset_eval.curation.stats import jaccard_summary

REMOVED_COLUMNS: tuple[str, ...] = (
    "item_id", "source_id", "status", "rule", "reason", "decided_by", "confidence", "stage", "decision_source",
    "annotator", "annotation_id",
    "pitfalls", "comment",
)
COUNT_COLUMNS: tuple[str, ...] = (
    "source", "input_items", "human_decisions", "removed_in_review", "curated", "unchanged", "edited",
    "edited_by_person",
)


@dataclass(frozen=True)
class PriorCuration:
    """What the ``curate`` folder of the reviewed items recorded (empty when not from one)."""

    folder: Path | None = None
    provenance: Mapping[str, Any] | None = None
    removed: pd.DataFrame | None = None


def prior_curation(items_path: str | Path) -> PriorCuration:
    """Provenance and removed table of the version folder ``items_path`` is (or is in)."""
    path = Path(items_path)
    folder = path if path.is_dir() else path.parent if path.name in VERSION_PAIR_FILES else None
    if folder is None or not (folder / "provenance.json").is_file():
        return PriorCuration()
    try:
        prov = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFormatError(folder / "provenance.json", f"not a JSON file: {exc}") from None
    removed = None
    if (folder / "removed.csv").is_file():
        removed = pd.read_csv(folder / "removed.csv", dtype=str, keep_default_na=False)
    return PriorCuration(folder, prov, removed)


def review_jaccard(before: Mapping[str, Item], items: Sequence[Item]) -> pd.DataFrame:
    """Jaccard of each curated sentence with its source sentence (as :func:`stereoset_eval.curation.stats.jaccard_table`).

    The source sentence is rebuilt from the item *as it was pushed* (its automatic edits
    reverted), so sentences a person rewrote are compared with the source too. A sentence
    counts as edited when it has automatic edits or a person changed it.
    """
    from stereoset_eval.curation.gender_swap import original_text
    from stereoset_eval.curation.text import jaccard

    edited: dict[str, list[float]] = defaultdict(list)
    every: dict[str, list[float]] = defaultdict(list)
    for it in items:
        pushed = before[it.id]
        src = origin_source(it)
        auto_roles = {e.sentence_role for e in pushed.provenance.edits}
        for s in it.sentences:
            try:
                _, orig = original_text(pushed, s.role)
            except ValueError as exc:
                raise DataFormatError(pushed.provenance.source_file, f"item {it.id}: its edits do not rebuild the "
                                      f"source sentence ({exc})", row=pushed.provenance.row, field="edits") from None
            value = jaccard(orig, s.text)
            every[src].append(value)
            if s.role in auto_roles or s.text != pushed.text(s.role):
                edited[src].append(value)
    return jaccard_summary(every, edited)


def _edited_by_person(item: Item) -> bool:
    return any(f.rule == REVIEW_FLAG and f.evidence.get("edits") for f in item.flags)


def review_counts(before: Sequence[Item], merge: MergeResult) -> pd.DataFrame:
    """Per source: items reviewed, human decisions, removed in review, curated (unchanged/edited)."""
    decided = set(merge.decisions.loc[merge.decisions["decision_source"] == "human", "item_id"])
    removed = set(merge.removed["item_id"])
    rows = []
    for src in sorted({origin_source(it) for it in before}):
        inputs = [it for it in before if origin_source(it) == src]
        items = [it for it in merge.items if origin_source(it) == src]
        by_person = [it for it in items if _edited_by_person(it)]
        rows.append({
            "source": src, "input_items": len(inputs),
            "human_decisions": sum(1 for it in inputs if it.id in decided),
            "removed_in_review": sum(1 for it in inputs if it.id in removed),
            "curated": len(items),
            "unchanged": sum(1 for it in items if not it.provenance.edits and not _edited_by_person(it)),
            "edited": sum(1 for it in items if it.provenance.edits),
            "edited_by_person": len(by_person),
        })
    return pd.DataFrame(rows, columns=list(COUNT_COLUMNS))


def _review_removed_rows(before: Mapping[str, Item], merge: MergeResult) -> list[dict[str, Any]]:
    rows = []
    for r in merge.removed.to_dict("records"):
        src, src_id = origin_of(before[r["item_id"]])
        human = r["decision_source"] == "human"
        rows.append({
            "item_id": r["item_id"], "source_id": f"{src}/{src_id}", "status": "removed",
            "rule": REVIEW_FLAG if human else r["decision_source"], "reason": r["reason"], "stage": "review",
            "decided_by": "review" if human else r["decision_source"],
            "decision_source": r["decision_source"], "annotator": r["annotator"] or "",
            "annotation_id": "" if pd.isna(r["annotation_id"]) else str(r["annotation_id"]),
            "pitfalls": r["pitfalls"] or "", "comment": r["comment"] or "",
        })
    return rows


@dataclass
class ReviewedVersion:
    """Everything :func:`stereoset_eval.curation.export.write_curation` and the dataset card read."""

    items: list[Item]
    pairs: list[Item]
    rule_summary: pd.DataFrame
    instance_rule_summary: pd.DataFrame
    lengths: pd.DataFrame
    jaccard: pd.DataFrame
    counts: pd.DataFrame
    categories: pd.DataFrame
    provenance: dict[str, Any]
    removed: pd.DataFrame
    failures: tuple = field(default=())
    decided: dict[str, tuple[str, float | None]] = field(default_factory=dict)  # item id -> (decided_by, confidence)

    def removed_table(self) -> pd.DataFrame:
        """What curation left out (carried over) and what the review removed, with reasons."""
        return self.removed


def reviewed_version(before: Sequence[Item], merge: MergeResult, *, inputs: Sequence[Mapping[str, Any]] = (),
                     prior: PriorCuration | None = None) -> ReviewedVersion:
    """The reviewed version of ``before`` (the pushed items) after ``merge``.

    ``inputs`` describes the files read (``benchmark``, ``file``, ``sha256``,
    ``items_loaded``) for the card and ``provenance.json``.
    """
    from stereoset_eval.curation.dimensions import DEFAULT_PRIORITY, DIMENSIONS
    from stereoset_eval.curation.lexicon import lexicon_sha256
    from stereoset_eval.curation.rules import RULES_VERSION, rule_summary
    from stereoset_eval.curation.stats import category_table, length_table

    prior = prior or PriorCuration()
    by_id = {it.id: it for it in before}
    old = dict(prior.provenance or {})
    removed = pd.DataFrame(_review_removed_rows(by_id, merge), columns=list(REMOVED_COLUMNS))
    if prior.removed is not None and len(prior.removed):
        carried = prior.removed.assign(stage="curation").reindex(columns=list(REMOVED_COLUMNS), fill_value="")
        removed = pd.concat([carried, removed], ignore_index=True)
    lengths = length_table(before, merge.items)
    lengths["stage"] = lengths["stage"].replace({"original": "before review"})
    provenance = {
        "tool": "stereoset-eval", "tool_version": __version__, "rules_version": RULES_VERSION,
        "lexicon_sha256": lexicon_sha256(),
        "config": old.get("config") or {"dimension_priority": list(DEFAULT_PRIORITY),
                                        "note": "curation config not recorded: the items were not read from a "
                                                "`stereoset-eval curate` folder"},
        "inputs": [dict(i) for i in inputs],
        "out_of_scope": old.get("out_of_scope", {}),
        "rule_failures": old.get("rule_failures", 0),
        "curation": old or None,
        "review": merge.provenance,
    }
    return ReviewedVersion(
        items=list(merge.items), pairs=list(before),
        rule_summary=rule_summary(before), instance_rule_summary=rule_summary(merge.items),
        lengths=lengths, jaccard=review_jaccard(by_id, merge.items), counts=review_counts(before, merge),
        categories=category_table(merge.items, DIMENSIONS), provenance=provenance, removed=removed,
        decided={it.id: ("review", None) for it in merge.items if any(f.rule == REVIEW_FLAG for f in it.flags)},
    )


def write_reviewed_version(out: str | Path, version: ReviewedVersion, merge: MergeResult, parsed: ParsedExport,
                           agreement: pd.DataFrame, *, name: str, source: str,
                           run: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write ``version`` like ``curate`` does, with the review section and ``review/`` files."""
    from stereoset_eval.curation.card import dataset_card
    from stereoset_eval.curation.export import write_curation
    from stereoset_eval.curation.labelstudio.report import report_markdown, review_report, write_review

    out = Path(out)
    card = dataset_card(version, version=name,
                        human_review=report_markdown(review_report(merge, parsed, agreement, source=source, run=run)))
    with output_folder(out, command="annotate merge") as tmp:
        write_curation(version, tmp, card=card)  # replaces the (empty) temporary folder's contents
        review = write_review(tmp / "review", merge, parsed, agreement, source=source, run=run)
    paths = {"card": out / "README.md", "pairs_csv": out / "pairs.csv", "pairs_parquet": out / "pairs.parquet",
             "hf_dataset": out / "hf_dataset", "removed": out / "removed.csv", "provenance": out / "provenance.json"}
    paths.update({f"review_{k}": out / "review" / p.name for k, p in review.items()})
    return paths
