"""The benchmark inputs: fixed slices of the real CrowS-Pairs and StereoSet intrasentence data.

Slices are the first N items in file order (CrowS-Pairs rows ``crows:0`` …; StereoSet
intrasentence examples in the order of the ids CSV), so every run times the same sentences.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from stereoset_eval.foundation.items import Item

CROWS_FILE = Path("crows-pairs") / "crows_pairs_anonymized.csv"
STEREOSET_FILE = Path("stereoset") / "stereoset_dev_ids_ptbr_llm.csv"


@lru_cache(maxsize=4)
def _all_items(data_dir: str, dataset: str) -> tuple[Item, ...]:
    root = Path(data_dir)
    if dataset == "crows-pairs":
        from stereoset_eval.curation.loaders.crows import load_crows_pairs

        return tuple(load_crows_pairs(root / CROWS_FILE))
    if dataset == "stereoset-intra":
        from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

        return tuple(i for i in load_stereoset_table(root / STEREOSET_FILE, split="dev") if i.source == "stereoset-intra")
    raise ValueError(f"unknown benchmark dataset {dataset!r}; known: crows-pairs, stereoset-intra")


def load_slice(data_dir: Path, dataset: str, n_items: int | None) -> list[Item]:
    """The first ``n_items`` items of ``dataset`` (all of them if None)."""
    items = _all_items(str(Path(data_dir).resolve()), dataset)
    return list(items if n_items is None else items[:n_items])
