"""Items a person has decided, read from a ``curation-gold`` file or a merged Label Studio version.

Both are read into :class:`Review` (one per source item): keep or remove, and per instance slot
(``m``, ``l``, ``as_is``) kept or dropped with the curated pair and its dimension. The pipeline
applies them as they are (``decided_by = review``) and grades every rule against them
(:mod:`stereoset_eval.curation.reliability`).

Accepted inputs:

* a CSV in the ``curation-gold`` schema (``../shared/data/curation-gold/README.md``);
* a folder written by ``stereoset-eval annotate merge`` (its ``decisions.csv``, ``pairs.csv`` and
  ``removed.csv``): only the items a person decided (``decision_source = human``) count as
  reviewed; the others followed the automatic proposal and are not a person's decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from stereoset_eval.foundation.errors import StereosetEvalError


class ReviewedItemsError(StereosetEvalError):
    """A reviewed-items file that cannot be read, or that names items the data lacks."""


@dataclass(frozen=True)
class ReviewedInstance:
    """A person's decision on one instance slot."""

    slot: str
    kept: bool
    sent_more: str = ""
    sent_less: str = ""
    dimension: str = ""


@dataclass(frozen=True)
class Review:
    """A person's decision on one source item."""

    source_id: str
    dataset: str
    keep: bool
    instances: Mapping[str, ReviewedInstance] = field(default_factory=dict)
    reason: str = ""
    origin: str = ""

    def kept_slot(self, slot: str) -> ReviewedInstance | None:
        inst = self.instances.get(slot)
        return inst if self.keep and inst is not None and inst.kept else None


def _from_gold(path: Path) -> dict[str, Review]:
    from stereoset_eval.curation.gold_eval import GoldFormatError, load_gold

    try:
        gold = load_gold(path)
    except GoldFormatError as exc:
        raise ReviewedItemsError(str(exc)) from None
    out: dict[str, Review] = {}
    for item, rows in gold.groupby("item", sort=False):
        first = rows.iloc[0]
        insts = {str(r["instance"]): ReviewedInstance(str(r["instance"]), r["instance_status"] == "kept",
                                                      str(r["sent_more"]), str(r["sent_less"]), str(r["dimension"]))
                 for r in rows.to_dict("records") if r["instance"]}
        out[str(item)] = Review(str(item), str(first["dataset"]), first["decision"] == "keep", insts,
                                str(first["remove_reason"]), path.name)
    return out


def _from_merged_version(folder: Path) -> dict[str, Review]:
    """Reviews from an ``annotate merge`` version: the items a person decided."""
    from stereoset_eval.curation.decision_record import dataset_of

    decisions_file = folder / "review" / "decisions.csv"
    missing = [p.name for p in (decisions_file, folder / "pairs.csv") if not p.is_file()]
    if missing:
        raise ReviewedItemsError(f"{folder}: not a merged Label Studio version (`annotate merge` output; "
                                 f"no {', '.join(missing)})")
    decisions = pd.read_csv(decisions_file, dtype=str, keep_default_na=False)
    pairs = pd.read_csv(folder / "pairs.csv", dtype=str, keep_default_na=False)
    for name, df, cols in (("review/decisions.csv", decisions, ("item_id", "decision", "decision_source")),
                           ("pairs.csv", pairs, ("id", "sent_more", "sent_less"))):
        lacking = [c for c in cols if c not in df.columns]
        if lacking:
            raise ReviewedItemsError(f"{folder / name}: missing column(s) {', '.join(lacking)}")
    kept_rows = {str(r["id"]): r for r in pairs.to_dict("records")}
    by_source: dict[str, dict[str, ReviewedInstance]] = {}
    removed_whole: set[str] = set()
    for n, r in enumerate(decisions.to_dict("records"), start=2):
        if r["decision_source"] != "human":
            continue
        item_id = str(r["item_id"])
        source_id, _, suffix = item_id.partition("#")
        slot = suffix or "as_is"
        kept = r["decision"] in ("keep", "edit", "kept", "edited") and item_id in kept_rows
        if r["decision"] not in ("keep", "edit", "kept", "edited", "remove", "removed"):
            raise ReviewedItemsError(f"{decisions_file}:{n}: decision {r['decision']!r} is not keep/edit/remove")
        row = kept_rows.get(item_id, {})
        by_source.setdefault(source_id, {})[slot] = ReviewedInstance(
            slot, kept, str(row.get("sent_more", "")), str(row.get("sent_less", "")), str(row.get("category", "")))
        if not suffix and not kept:
            removed_whole.add(source_id)
    out = {}
    for source_id, insts in by_source.items():
        src = source_id.split("/", 1)[0]
        keep = any(i.kept for i in insts.values()) and source_id not in removed_whole
        out[source_id] = Review(source_id, dataset_of(src), keep, insts, "" if keep else "reviewed: removed",
                                folder.name)
    return out


def load_reviews(paths: Iterable[str | Path]) -> dict[str, Review]:
    """Reviews from every path (a gold CSV or a merged version folder); a later file overrides an earlier one."""
    out: dict[str, Review] = {}
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.update(_from_merged_version(path))
        elif path.is_file():
            out.update(_from_gold(path))
        else:
            raise ReviewedItemsError(f"{path}: reviewed-items file not found")
    return out


def check_known(reviews: Mapping[str, Review], known: Iterable[str], *, curated_datasets: Iterable[str]) -> None:
    """A reviewed item of a curated benchmark that the data lacks is an error (wrong file or wrong data)."""
    known = set(known)
    datasets = set(curated_datasets)
    lacking = sorted(s for s, r in reviews.items() if r.dataset in datasets and s not in known)
    if lacking:
        origin = reviews[lacking[0]].origin
        raise ReviewedItemsError(
            f"{origin}: {len(lacking)} reviewed item(s) are not in the curated data, e.g. {lacking[0]} "
            "(reviewed items must come from the same benchmark files)")
