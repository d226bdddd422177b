"""One entry point to load any benchmark file: ``load_items(family, path)``.

Formats are detected from the file: ``.json`` = official StereoSet JSON, ``.jsonl`` = flat
StereoSet JSONL, ``.csv``/``.tsv``/``.parquet`` with a ``gold_label`` column = per-sentence
StereoSet table, otherwise a CrowS-Pairs file. ``family`` (``stereoset``, ``crows``,
``pairs``: the part of a format name before its first ``-``) guards against loading one
benchmark's file as another's. Which family a benchmark reads is the benchmark's own
declaration (:mod:`stereoset_eval.analysis.benchmarks`); this module knows formats only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from stereoset_eval.foundation.errors import DataFormatError, UnknownNameError
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.loaders.crows import load_crows_pairs
from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json
from stereoset_eval.curation.loaders.stereoset_jsonl import load_stereoset_jsonl
from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

FORMATS: dict[str, str] = {
    "stereoset-json": "official dev.json/test.json (data.intrasentence[], data.intersentence[])",
    "stereoset-table": "one row per sentence: CSV/TSV/parquet with a column mapping",
    "stereoset-jsonl": "flat JSONL: type, target, bias_type, context, stereotype, anti-stereotype, unrelated",
    "stereoset-hub": "Hugging Face hub dataset McGill-NLP/stereoset (needs hub access or a local cache)",
    "crows-csv": "CrowS-Pairs original CSV (comma-separated, index column first)",
    "crows-revised-tsv": "CrowS-Pairs revised English file (TAB-separated)",
    "pairs-csv": "harmonised pairs: sent_more, sent_less, stereo_antistereo, bias_type, category (+ provenance)",
}


def _header(path: Path) -> str:
    with open(path, "rb") as fh:
        return fh.readline().decode("utf-8-sig", errors="replace")


def detect_format(path: str | Path) -> str:
    """Name of the format of ``path`` (see :data:`FORMATS`)."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file does not exist")
    suffix = path.suffix.lower()
    if suffix == ".json":
        return "stereoset-json"
    if suffix == ".jsonl":
        return "stereoset-jsonl"
    if suffix == ".parquet":
        import pandas as pd

        cols = set(pd.read_parquet(path).columns)
        if "gold_label" in cols:
            return "stereoset-table"
        return "pairs-csv" if "category" in cols or "source_id" in cols else "crows-csv"
    header = _header(path)
    if "gold_label" in header:
        return "stereoset-table"
    if "source_id" in header:
        return "pairs-csv"
    if "sent_more" in header:
        return "crows-revised-tsv" if header.count("\t") > header.count(",") else "crows-csv"
    raise DataFormatError(path, f"cannot tell the format from the header {header.strip()[:120]!r}")


def loader_for(fmt: str) -> Callable[[Path], list[Item]]:
    table: dict[str, Callable[[Path], list[Item]]] = {
        "stereoset-json": load_stereoset_json,
        "stereoset-jsonl": load_stereoset_jsonl,
        "stereoset-table": load_stereoset_table,
        "crows-csv": lambda p: load_crows_pairs(p, revised=False),
        "crows-revised-tsv": lambda p: load_crows_pairs(p, revised=True),
    }
    try:
        from stereoset_eval.curation.loaders.pairs_csv import load_pairs  # provided by the stereoset_eval.curation export module

        table["pairs-csv"] = load_pairs
    except ImportError:
        pass
    if fmt not in table:
        raise UnknownNameError("format", fmt, list(table))
    return table[fmt]


def families() -> list[str]:
    """The format families: ``stereoset``, ``crows``, ``pairs`` (format names up to their first ``-``)."""
    return list(dict.fromkeys(f.split("-")[0] for f in FORMATS))


def load_items(benchmark: str, path: str | Path, *, fmt: str | None = None) -> list[Item]:
    """Load ``path`` as a file of ``benchmark``'s family; the format is detected unless given.

    ``benchmark`` is a family or a name that starts with one (``crows-pairs`` reads ``crows``
    files).
    """
    expected = benchmark.split("-")[0]
    if expected not in families():
        raise UnknownNameError("benchmark", benchmark, families())
    path = Path(path)
    fmt = fmt or detect_format(path)
    family = fmt.split("-")[0]
    if family != expected:
        raise DataFormatError(path, f"looks like a {fmt} file, not {benchmark}")
    return loader_for(fmt)(path)
