"""StereoSet from the Hugging Face hub (``McGill-NLP/stereoset``) through ``datasets``.

The hub dataset has configs ``intrasentence`` and ``intersentence`` with a single
``validation`` split (= the dev set). Each row: ``id, target, bias_type, context,
sentences{sentence[], id[], labels[], gold_label[]}`` where ``gold_label`` is a ClassLabel
whose names we read from the features (never hard-coded integers). Offline, ``datasets``
can only use a local cache; without one this raises a clear error instead of hanging.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stereoset_eval.foundation.errors import DataFormatError, StereosetEvalError
from stereoset_eval.foundation.items import STEREOSET_TASKS, Item
from stereoset_eval.curation.loaders.stereoset_records import SentenceRecord, build_stereoset_items, normalise_gold_label

HUB_DATASET = "McGill-NLP/stereoset"


class HubUnavailableError(StereosetEvalError):
    """The hub could not be reached and no local cache holds the dataset."""


def records_from_hub_rows(rows: Any, task: str, label_names: list[str], *, origin: Path) -> list[SentenceRecord]:
    """Turn rows of the hub layout into sentence records (testable without the hub)."""
    records: list[SentenceRecord] = []
    for i, row in enumerate(rows, start=1):
        sents = row["sentences"]
        for text, sid, gold in zip(sents["sentence"], sents["id"], sents["gold_label"]):
            label = label_names[gold] if isinstance(gold, int) else gold
            records.append(SentenceRecord(
                row=i, task=task, example_id=str(row["id"]), target=str(row["target"]),
                bias_type=str(row["bias_type"]), context=str(row["context"]), sentence_id=str(sid),
                sentence=str(text), gold_label=normalise_gold_label(label, path=origin, row=i),
            ))
    return records


def load_stereoset_hub(
    *, revision: str | None = None, split: str = "validation", cache_dir: str | None = None,
    tasks: tuple[str, ...] = STEREOSET_TASKS,
) -> list[Item]:
    """Download (or read from the ``datasets`` cache) and convert the hub dataset."""
    import datasets

    origin = Path(f"hf://datasets/{HUB_DATASET}@{revision or 'main'}")
    records: list[SentenceRecord] = []
    fingerprints: list[str] = []
    for task in tasks:
        try:
            ds = datasets.load_dataset(HUB_DATASET, task, split=split, revision=revision, cache_dir=cache_dir)
        except Exception as exc:  # network, offline mode, missing cache: all the same to a user
            raise HubUnavailableError(
                f"cannot load {HUB_DATASET} ({task}, split {split}) from the hub or the local cache: "
                f"{type(exc).__name__}: {exc}. Use a local file (--data) instead, or run once with hub access."
            ) from None
        feature = ds.features["sentences"].feature["gold_label"] if hasattr(ds.features["sentences"], "feature") else ds.features["sentences"]["gold_label"]
        names = list(getattr(feature, "names", None) or getattr(getattr(feature, "feature", None), "names", []))
        if not names:
            raise DataFormatError(origin, "hub features lack gold_label class names", field="gold_label")
        records += records_from_hub_rows(ds, task, names, origin=origin)
        fingerprints.append(getattr(ds, "_fingerprint", ""))
    return build_stereoset_items(
        records, path=origin, sha256="datasets-fingerprint:" + "+".join(fingerprints), fmt="stereoset-hub",
        split="dev" if split == "validation" else split,
    )
