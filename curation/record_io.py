"""Read and write :class:`~stereoset_eval.curation.decision_record.ItemRecord` as JSON lines.

A curate output keeps every source item's proposed decisions (``decision_records.jsonl``), so
``curate-eval`` can cross-fit the reliability estimates on a gold file later without rerunning
the rules.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from stereoset_eval.curation.decision_record import Decided, ItemRecord
from stereoset_eval.foundation.atomic import atomic_write_text


def record_to_dict(r: ItemRecord) -> dict:
    return {"source_id": r.source_id, "dataset": r.dataset, "decided": [d.to_dict() for d in r.decided],
            "kept": {s: it.to_dict() for s, it in sorted(r.kept.items())},
            "candidates": {s: it.to_dict() for s, it in sorted(r.candidates.items())},
            "reasons": dict(sorted(r.reasons.items())), "pair": r.pair.to_dict() if r.pair is not None else None}


def record_from_dict(d: dict) -> ItemRecord:
    from stereoset_eval.curation.labelstudio.items_io import item_from_dict

    return ItemRecord(d["source_id"], d["dataset"], tuple(Decided(**x) for x in d["decided"]),
                      {s: item_from_dict(x) for s, x in d["kept"].items()},
                      {s: item_from_dict(x) for s, x in d["candidates"].items()},
                      dict(d["reasons"]), item_from_dict(d["pair"]) if d.get("pair") else None)


def write_records(path: str | Path, records: Iterable[ItemRecord]) -> Path:
    text = "".join(json.dumps(record_to_dict(r), sort_keys=True, ensure_ascii=False) + "\n" for r in records)
    return atomic_write_text(path, text)


def read_records(path: str | Path) -> list[ItemRecord]:
    """Records from ``path``; a bad line raises one error naming the file and line."""
    from stereoset_eval.curation.labelstudio.items_io import read_jsonl

    return read_jsonl(path, record_from_dict, what="a decision record")
