"""Build StereoSet items from normalised per-sentence records, validating as we go.

Every StereoSet format (official JSON, per-sentence tables, flat JSONL, the hub dataset)
is first turned into :class:`SentenceRecord` rows; this module groups them into items and
raises :class:`DataFormatError` (file, row, problem) on anything that would otherwise be
silently dropped or mis-scored. Load-time anomalies that do not prevent loading (double
BLANKs, BLANK glued to letters, duplicated examples) become flags, see ``anomalies``.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.limits import check_field
from stereoset_eval.foundation.items import STEREOSET_ROLES, STEREOSET_TASKS, Item, Provenance, Sentence

GOLD_LABEL_ALIASES: dict[str, str] = {
    "stereotype": "stereotype",
    "anti-stereotype": "anti-stereotype",
    "anti_stereotype": "anti-stereotype",
    "antistereotype": "anti-stereotype",
    "unrelated": "unrelated",
}
TASK_ALIASES: dict[str, str] = {
    "intrasentence": "intrasentence",
    "intra": "intrasentence",
    "intersentence": "intersentence",
    "inter": "intersentence",
}
SOURCE_OF_TASK = {"intrasentence": "stereoset-intra", "intersentence": "stereoset-inter"}


@dataclass(frozen=True)
class SentenceRecord:
    """One StereoSet sentence as read from a file, before grouping into examples."""

    row: int
    task: str
    example_id: str
    target: str
    bias_type: str
    context: str
    sentence_id: str
    sentence: str
    gold_label: str


def normalise_gold_label(value: object, *, path: Path, row: int) -> str:
    label = str(value).strip().lower() if value is not None else ""
    if label not in GOLD_LABEL_ALIASES:
        raise DataFormatError(
            path,
            f"unknown gold label {value!r}; expected one of {', '.join(STEREOSET_ROLES)}",
            row=row,
            field="gold_label",
        )
    return GOLD_LABEL_ALIASES[label]


def json_text(value: object, *, path: Path, row: int, field: str, id_ok: bool = False) -> str:
    """A JSON value that must be text (ids may be integers); null is never the sentence "None"."""
    if isinstance(value, str):
        return value
    if id_ok and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    kind = "null" if value is None else type(value).__name__
    raise DataFormatError(path, f"is JSON {kind} ({json.dumps(value, default=str)[:60]}), expected a string",
                          row=row, field=field)


def normalise_task(value: object, *, path: Path, row: int) -> str:
    task = str(value).strip().lower() if value is not None else ""
    if task not in TASK_ALIASES:
        raise DataFormatError(
            path,
            f"unknown task {value!r}; expected one of {', '.join(STEREOSET_TASKS)}",
            row=row,
            field="task",
        )
    return TASK_ALIASES[task]


def build_stereoset_items(
    records: Iterable[SentenceRecord],
    *,
    path: Path,
    sha256: str,
    fmt: str,
    format_version: str = "1",
    split: str | None = None,
) -> list[Item]:
    """Group sentence records into one item per example, in first-seen order.

    Raises DataFormatError for: empty/whitespace-only text, a duplicate sentence id, an
    example whose fields disagree between its rows, an example without exactly one
    sentence of each gold role.
    """
    from stereoset_eval.curation.loaders.anomalies import stereoset_load_flags

    seen_sentence_ids: dict[str, int] = {}
    groups: "OrderedDict[tuple[str, str], list[SentenceRecord]]" = OrderedDict()
    for rec in records:
        for field_name in ("example_id", "sentence_id", "target", "bias_type", "context", "sentence"):
            value = getattr(rec, field_name)
            check_field(path, value, row=rec.row, field=field_name,
                        table_sep=("\t" if path.suffix.lower() == ".tsv" else ",") if fmt == "stereoset-table" else None)
            if value is None or not str(value).strip():
                raise DataFormatError(path, "empty or whitespace-only value", row=rec.row, field=field_name)
        if rec.sentence_id in seen_sentence_ids:
            raise DataFormatError(
                path,
                f"duplicate sentence id {rec.sentence_id!r} (first seen at row {seen_sentence_ids[rec.sentence_id]})",
                row=rec.row,
                field="sentence_id",
            )
        seen_sentence_ids[rec.sentence_id] = rec.row
        groups.setdefault((rec.task, rec.example_id), []).append(rec)

    items: list[Item] = []
    for (task, example_id), recs in groups.items():
        first = recs[0]
        for rec in recs[1:]:
            for field_name in ("target", "bias_type", "context"):
                if getattr(rec, field_name) != getattr(first, field_name):
                    raise DataFormatError(
                        path,
                        f"example {example_id} has {field_name} {getattr(rec, field_name)!r} here "
                        f"but {getattr(first, field_name)!r} at row {first.row}",
                        row=rec.row,
                        field=field_name,
                    )
        roles = [r.gold_label for r in recs]
        missing = [r for r in STEREOSET_ROLES if r not in roles]
        extra = sorted({r for r in roles if roles.count(r) > 1})
        if missing or extra or len(recs) != 3:
            problem = []
            if missing:
                problem.append(f"missing {', '.join(missing)}")
            if extra:
                problem.append(f"more than one {', '.join(extra)}")
            raise DataFormatError(
                path,
                f"example {example_id} ({task}) must have exactly one stereotype, anti-stereotype "
                f"and unrelated sentence: {'; '.join(problem) or f'{len(recs)} sentences'}",
                row=first.row,
            )
        by_role = {r.gold_label: r for r in recs}
        sentences = tuple(
            Sentence(id=by_role[role].sentence_id, text=by_role[role].sentence, role=role)
            for role in STEREOSET_ROLES
        )
        item = Item(
            id=example_id,
            source=SOURCE_OF_TASK[task],
            bias_type=first.bias_type.strip().lower(),
            target=first.target,
            context=first.context,
            sentences=sentences,
            split=split,
            provenance=Provenance(
                source_file=str(path), sha256=sha256, row=first.row, format=fmt,
                format_version=format_version,
            ),
        )
        items.append(item)
    return stereoset_load_flags(items)
