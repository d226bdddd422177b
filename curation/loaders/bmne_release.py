"""The BMNE release (the BMNE paper: Zakizadeh & Pilehvar 2025) as pair items with human dimension tags.

The release is the Hugging Face dataset ``teias-ai/BMNE`` (configs ``stereoset``: 223 pairs,
``crowspairs``: 186 pairs; split ``train``) with the five columns ``sent_less, sent_more,
stereo_antistereo, bias_type, category``. A copy may be a CSV (``stereoset_subset.csv``), a
parquet file (the hub's parquet export) or a ``datasets`` folder written by ``save_to_disk``;
:mod:`stereoset_eval.curation.loaders.download` fetches and verifies the hub copy.

Rows are read by :func:`stereoset_eval.curation.loaders.pairs_csv.load_pairs` (the one pairs
parser); this module then makes them release items: ids ``bmne-<subset>:<row>``, source
``bmne-<subset>``, provenance format ``bmne-release``, and the release's ``category`` as a
**human** dimension tag (annotator ``BMNE release``) — so curation never re-tags them and
balanced ss groups by the release's own categories.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path

from stereoset_eval.curation.dimensions import DimensionTag, with_tag
from stereoset_eval.curation.loaders.pairs_csv import load_pairs
from stereoset_eval.curation.pairs import rehome_flags, sentence_ids
from stereoset_eval.foundation.atomic import atomic_path
from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.foundation.items import Item, Sentence

RELEASE_COLUMNS: tuple[str, ...] = ("sent_less", "sent_more", "stereo_antistereo", "bias_type", "category")
#: the release's subsets: config name -> number of pairs at the pinned revision
SUBSETS: dict[str, int] = {"stereoset": 223, "crowspairs": 186}
TAG_ANNOTATOR = "BMNE release"
FORMAT = "bmne-release"


def _check_columns(path: Path, columns: list[str]) -> None:
    missing = [c for c in RELEASE_COLUMNS if c not in columns]
    if missing:
        raise DataFormatError(path, f"not a BMNE release file: missing column(s) {missing}; "
                                    f"expected {list(RELEASE_COLUMNS)}, found {columns}")


def _from_dataset_folder(path: Path) -> list[Item]:
    """A ``save_to_disk`` folder: written to a temporary parquet, then read like any copy."""
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except (FileNotFoundError, ValueError) as exc:
        raise DataFormatError(path, f"not a datasets folder ({exc})") from None
    if isinstance(ds, datasets.DatasetDict):
        if "train" not in ds:
            raise DataFormatError(path, f"datasets folder has splits {list(ds)}, expected 'train'")
        ds = ds["train"]
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "release.parquet"
        with atomic_path(copy) as part:
            ds.to_parquet(str(part))
        items = load_pairs(copy)
        sha = _folder_sha256(path)
    return [i.replace(provenance=dataclasses.replace(i.provenance, source_file=str(path), sha256=sha)) for i in items]


def _folder_sha256(path: Path) -> str:
    """sha256 over the folder's data files: one ``<sha256>  <relative path>`` line per ``*.arrow`` file."""
    lines = "".join(f"{file_sha256(f)}  {f.relative_to(path).as_posix()}\n" for f in sorted(path.rglob("*.arrow")))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def load_bmne_release(path: str | Path, *, subset: str) -> list[Item]:
    """Items of a copy of the BMNE release's ``subset`` (``stereoset`` or ``crowspairs``).

    Every row must carry a ``category`` (the release tags every pair); an empty one is an
    error naming the row, never an untagged pair.
    """
    if subset not in SUBSETS:
        raise DataFormatError(path, f"unknown BMNE subset {subset!r}; expected one of {sorted(SUBSETS)}")
    path = Path(path)
    if path.is_dir():
        raw = _from_dataset_folder(path)
    else:
        from stereoset_eval.curation.loaders.stereoset_table import read_table

        _check_columns(path, list(read_table(path).columns))
        raw = load_pairs(path)
    out = []
    for it in raw:
        row = it.provenance.row
        if it.dimension is None:
            raise DataFormatError(path, "empty category: every pair of the BMNE release has a human dimension tag",
                                  row=row, field="category")
        item_id = f"bmne-{subset}:{row}"
        more_id, less_id = sentence_ids(item_id)
        item = it.replace(
            id=item_id,
            source=f"bmne-{subset}",
            sentences=(Sentence(more_id, it.text("sent_more"), "sent_more"),
                       Sentence(less_id, it.text("sent_less"), "sent_less")),
            provenance=dataclasses.replace(it.provenance, format=FORMAT,
                                           note=f"BMNE release (teias-ai/BMNE, config {subset})"),
            flags=rehome_flags(it.flags, item_id),
        )
        out.append(with_tag(item, DimensionTag(item_id, it.dimension, "human", (), TAG_ANNOTATOR)))
    return out
