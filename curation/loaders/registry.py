"""One entry point to load any benchmark file: ``load_items(benchmark, path)``.

Formats are detected from the file: ``.json`` = official StereoSet JSON, ``.jsonl`` = flat
StereoSet JSONL, ``.csv``/``.tsv``/``.parquet`` with a ``gold_label`` column = per-sentence
StereoSet table, otherwise a CrowS-Pairs file. ``benchmark`` (``stereoset`` or
``crows-pairs``) guards against loading one benchmark as the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from stereoset_eval.foundation.errors import DataFormatError, UnknownNameError
from stereoset_eval.foundation.files import check_input_file
from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.loaders.crows import load_crows_pairs
from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json
from stereoset_eval.curation.loaders.stereoset_jsonl import load_stereoset_jsonl
from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

BENCHMARKS: dict[str, str] = {
    "stereoset": "StereoSet (Nadeem et al. 2021): intrasentence + intersentence",
    "crows-pairs": "CrowS-Pairs (Nangia et al. 2020) original or revised (Neveol et al. 2022)",
    "pairs": "Harmonised pair files written by `stereoset-eval curate` (BMNE column schema)",
}

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
    path = check_input_file(path)
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


def load_items(benchmark: str, path: str | Path, *, fmt: str | None = None) -> list[Item]:
    """Load ``path`` as ``benchmark``; the format is detected unless given."""
    if benchmark not in BENCHMARKS:
        raise UnknownNameError("benchmark", benchmark, list(BENCHMARKS))
    path = Path(path)
    fmt = fmt or detect_format(path)
    family = fmt.split("-")[0]
    expected = {"stereoset": "stereoset", "crows-pairs": "crows", "pairs": "pairs"}[benchmark]
    if family != expected:
        raise DataFormatError(path, f"looks like a {fmt} file, not {benchmark}")
    return loader_for(fmt)(path)
