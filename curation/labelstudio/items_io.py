"""Read and write items as JSON lines (``Item.to_dict`` per line), losslessly.

The review round trip needs the items exactly as pushed (flags, dimension, provenance),
so this is the interchange format of ``stereoset-eval annotate``. :func:`load_review_items`
also reads what ``stereoset-eval curate`` writes: a version folder, or its ``pairs.csv`` /
``pairs.parquet`` (:func:`stereoset_eval.curation.loaders.pairs_csv.load_pairs`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, TypeVar

from stereoset_eval.foundation.atomic import atomic_write_text
from stereoset_eval.foundation.errors import DataFormatError, StereosetEvalError
from stereoset_eval.foundation.files import check_input_file
from stereoset_eval.foundation.items import Edit, Flag, Item, Provenance, Sentence

T = TypeVar("T")


def item_from_dict(d: Mapping[str, Any]) -> Item:
    """Inverse of :meth:`Item.to_dict` (KeyError/TypeError on a malformed record)."""
    prov = dict(d["provenance"])
    prov["edits"] = tuple(Edit(**e) for e in prov.get("edits") or ())
    if "sentence_origins" in prov:
        prov["sentence_origins"] = tuple(tuple(o) for o in prov["sentence_origins"] or ())
    return Item(
        id=d["id"], source=d["source"], bias_type=d["bias_type"],
        sentences=tuple(Sentence(**s) for s in d["sentences"]),
        provenance=Provenance(**prov),
        target=d.get("target"), context=d.get("context"), direction=d.get("direction"),
        split=d.get("split"), dimension=d.get("dimension"),
        flags=tuple(Flag(**f) for f in d.get("flags") or ()),
    )


def read_jsonl(path: str | Path, parse: Callable[[Any], T], *, what: str) -> list[T]:
    """``parse`` of every JSON line of ``path`` (blank lines skipped); DataFormatError naming the line
    on a bad record ("not <what>: …")."""
    path = check_input_file(path)
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(parse(json.loads(line)))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise DataFormatError(path, f"not {what}: {type(exc).__name__}: {exc}", row=n) from None
    return out


def read_items_jsonl(path: str | Path) -> list[Item]:
    """Items from a JSON-lines file; DataFormatError naming the line on a bad record."""
    return read_jsonl(path, item_from_dict, what="an item record")


def write_items_jsonl(path: str | Path, items: Iterable[Item]) -> Path:
    """One ``Item.to_dict`` JSON object per line, keys sorted (atomic write)."""
    text = "".join(json.dumps(it.to_dict(), sort_keys=True, ensure_ascii=False) + "\n" for it in items)
    return atomic_write_text(path, text)


PAIR_TABLE_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".parquet")
VERSION_PAIR_FILES: tuple[str, ...] = ("pairs.parquet", "pairs.csv")


def pairs_file_of(path: str | Path) -> Path:
    """The pairs file a review reads: ``path`` itself, or the pairs file of a version folder."""
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in VERSION_PAIR_FILES if (path / name).is_file()]
        if not found:
            raise DataFormatError(path, f"folder has none of {list(VERSION_PAIR_FILES)}: "
                                        "not a version written by `stereoset-eval curate`")
        return found[0]
    return path


def load_review_items(path: str | Path) -> list[Item]:
    """Curated items to review: items JSON lines, a pairs CSV/TSV/parquet, or a version folder.

    Pair tables go through :func:`stereoset_eval.curation.loaders.pairs_csv.load_pairs` (ids, flags, dimension and
    provenance columns restored), so the items pushed from ``pairs.csv`` are the ones the
    merge later matches by id.
    """
    path = check_input_file(pairs_file_of(path))
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return read_items_jsonl(path)
    if suffix in PAIR_TABLE_SUFFIXES:
        from stereoset_eval.curation.loaders.pairs_csv import load_pairs

        return load_pairs(path)
    raise StereosetEvalError(f"{path}: cannot read items from a {suffix or 'suffix-less'} file; give items JSON "
                             f"lines (.jsonl), a pairs file ({', '.join(PAIR_TABLE_SUFFIXES)}) or a folder "
                             "written by `stereoset-eval curate`")
