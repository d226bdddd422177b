"""StereoSet as one row per sentence (CSV, TSV or parquet) with an explicit column mapping.

The mapping names, for each field the toolkit needs, the column that holds it. The default
mapping fits the id-carrying dev file ``stereoset_dev_ids_ptbr_llm.csv`` (UTF-8 with BOM):
``dataset_type, cluster_id, bias_type, target, context, sentence, gold_label, sentence_id``.
Rows are 1-based data rows (the header is row 0), so row N is line N+1 of a CSV.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Mapping

import pandas as pd

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import Item
from stereoset_eval.foundation.files import check_input_file, file_sha256, read_text_strict
from stereoset_eval.curation.loaders.stereoset_records import (
    SentenceRecord, build_stereoset_items, normalise_gold_label, normalise_task,
)

REQUIRED_FIELDS: tuple[str, ...] = (
    "task", "example_id", "target", "bias_type", "context", "sentence", "gold_label", "sentence_id",
)
DEFAULT_COLUMNS: dict[str, str] = {
    "task": "dataset_type",
    "example_id": "cluster_id",
    "target": "target",
    "bias_type": "bias_type",
    "context": "context",
    "sentence": "sentence",
    "gold_label": "gold_label",
    "sentence_id": "sentence_id",
}


def read_table(path: Path, *, sep: str | None = None) -> pd.DataFrame:
    """Read CSV/TSV/parquet as strings; malformed rows raise with their line number.

    ``sep`` defaults to TAB for ``.tsv`` and comma otherwise. A row with more fields than
    the header is an error (an extra delimiter), never silently re-aligned.
    """
    if path.suffix.lower() == ".parquet":
        check_input_file(path)
        try:
            return pd.read_parquet(path).astype("string").fillna("")
        except Exception as exc:  # pyarrow raises many types; name the file
            raise DataFormatError(path, f"cannot read parquet: {exc}") from None
    text = read_text_strict(path)
    if sep is None:
        sep = "\t" if path.suffix.lower() == ".tsv" else ","
    header = next(csv.reader(io.StringIO(text.split("\n", 1)[0]), delimiter=sep), [])
    try:
        df = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False, on_bad_lines="error")
    except pd.errors.ParserError as exc:
        # pandas: "Error tokenizing data. C error: Expected 8 fields in line 3, saw 9\n"
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
        if found:
            want, line, got = (int(g) for g in found.groups())
            raise DataFormatError(
                path, f"malformed table (separator {sep!r}): {got} fields where the header has {want} "
                f"(an extra {sep!r} delimiter? quote fields that contain it)", row=line - 1,
            ) from None
        hint = "; a quote opened there is never closed (an unbalanced quote)" if "EOF inside string" in str(exc) else ""
        raise DataFormatError(path, f"malformed table (separator {sep!r}): {' '.join(str(exc).split())}{hint}") from None
    except pd.errors.EmptyDataError:
        raise DataFormatError(path, "file is empty") from None
    if len(header) != len(df.columns) or (df.index.dtype != "int64" and len(df)):
        raise DataFormatError(path, f"rows have more fields than the header (extra {sep!r} delimiter?)")
    return df


def load_stereoset_table(
    path: str | Path,
    *,
    columns: Mapping[str, str] | None = None,
    sep: str | None = None,
    split: str | None = None,
) -> list[Item]:
    """Load a per-sentence StereoSet table through ``columns`` (field -> column name)."""
    path = Path(path)
    mapping = dict(DEFAULT_COLUMNS)
    mapping.update(columns or {})
    unknown = sorted(set(mapping) - set(REQUIRED_FIELDS))
    if unknown:
        raise DataFormatError(path, f"column mapping names unknown field(s) {unknown}; known: {list(REQUIRED_FIELDS)}")
    df = read_table(path, sep=sep)
    missing = [f"{col!r} (for {f})" for f, col in mapping.items() if col not in df.columns]
    if missing:
        hint = ""
        if len(df.columns) == 1:
            hint = " — the whole header is one column: wrong delimiter?"
        raise DataFormatError(
            path, f"missing required column(s) {', '.join(missing)}; found {list(df.columns)}{hint}"
        )
    if df.empty:
        raise DataFormatError(path, "table has a header but no rows")
    records = []
    cols = {f: df[c].tolist() for f, c in mapping.items()}
    for i in range(len(df)):
        row = i + 1
        get = {f: ("" if cols[f][i] is None else str(cols[f][i])) for f in mapping}
        records.append(SentenceRecord(
            row=row,
            task=normalise_task(get["task"], path=path, row=row),
            example_id=get["example_id"].strip(),
            target=get["target"],
            bias_type=get["bias_type"],
            context=get["context"],
            sentence_id=get["sentence_id"].strip(),
            sentence=get["sentence"],
            gold_label=normalise_gold_label(get["gold_label"], path=path, row=row),
        ))
    return build_stereoset_items(records, path=path, sha256=file_sha256(path), fmt="stereoset-table", split=split)
