"""StereoSet in the official JSON layout (``dev.json`` / ``test.json``).

``{"version": ..., "data": {"intrasentence": [example...], "intersentence": [...]}}`` where
each example has ``id, target, bias_type, context, sentences[]`` and each sentence has
``id, sentence, gold_label, labels[]``. Rows in errors are 1-based example positions within
their task list.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import STEREOSET_TASKS, Item
from stereoset_eval.foundation.files import file_sha256, read_text_strict
from stereoset_eval.curation.loaders.stereoset_records import (
    SentenceRecord, build_stereoset_items, json_text, normalise_gold_label,
)

_EXAMPLE_KEYS = ("id", "target", "bias_type", "context", "sentences")
_SENTENCE_KEYS = ("id", "sentence", "gold_label")


def load_stereoset_json(path: str | Path, *, split: str | None = None) -> list[Item]:
    """Load an official StereoSet JSON file; both tasks, in file order."""
    path = Path(path)
    text = read_text_strict(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"malformed JSON: {exc.msg} (column {exc.colno})", row=exc.lineno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict):
        raise DataFormatError(path, 'wrong shape: expected {"data": {"intrasentence": [...], "intersentence": [...]}}')
    data = doc["data"]
    unknown = sorted(set(data) - set(STEREOSET_TASKS))
    if unknown:
        raise DataFormatError(path, f"unknown task key(s) under 'data': {unknown}")
    if not any(t in data for t in STEREOSET_TASKS):
        raise DataFormatError(path, "no 'intrasentence' or 'intersentence' list under 'data'")
    records: list[SentenceRecord] = []
    for task in STEREOSET_TASKS:
        examples = data.get(task, [])
        if not isinstance(examples, list):
            raise DataFormatError(path, f"data.{task} must be a list", field=task)
        for i, ex in enumerate(examples, start=1):
            if not isinstance(ex, dict):
                raise DataFormatError(path, f"{task} example is not an object", row=i)
            for key in _EXAMPLE_KEYS:
                if key not in ex:
                    raise DataFormatError(path, f"{task} example lacks {key!r}", row=i, field=key)
            if not isinstance(ex["sentences"], list):
                raise DataFormatError(path, f"{task} example 'sentences' must be a list", row=i, field="sentences")
            for s in ex["sentences"]:
                if not isinstance(s, dict) or any(k not in s for k in _SENTENCE_KEYS):
                    raise DataFormatError(
                        path, f"{task} example {ex['id']}: a sentence lacks one of {_SENTENCE_KEYS}",
                        row=i, field="sentences",
                    )
                field_text = functools.partial(json_text, path=path, row=i)
                records.append(SentenceRecord(
                    row=i, task=task, example_id=field_text(ex["id"], field="id", id_ok=True),
                    target=field_text(ex["target"], field="target"),
                    bias_type=field_text(ex["bias_type"], field="bias_type"), context=field_text(ex["context"], field="context"),
                    sentence_id=field_text(s["id"], field="sentences.id", id_ok=True),
                    sentence=field_text(s["sentence"], field="sentence"),
                    gold_label=normalise_gold_label(s["gold_label"], path=path, row=i),
                ))
    return build_stereoset_items(
        records, path=path, sha256=file_sha256(path), fmt="stereoset-json",
        format_version=str(doc.get("version", "unknown")), split=split,
    )
