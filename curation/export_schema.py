"""The column schema of a curated export, the same in CSV, parquet and the Hugging Face dataset.

One table of ``(column, type)`` drives every format, so a column never changes type between
them: text columns are strings, ``source_row`` is a nullable integer, and a missing value
(no category, no target, no source row) is a null in parquet and arrow and an empty field in
CSV (CSV has no null). ``edits``, ``sentence_origins``, ``dimension_evidence`` and
``item_flags`` hold JSON text in every format (lists of records whose keys vary by rule do not
fit one struct type); the card says so. ``item_flags`` is not called ``flags`` because that name
shadows ``pandas.DataFrame.flags``.
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

import pandas as pd

ColumnType = Literal["string", "int64", "float64"]

BMNE_COLUMNS: tuple[str, ...] = ("sent_more", "sent_less", "stereo_antistereo", "bias_type", "category")
#: every column of pairs.csv / pairs.parquet / hf_dataset, in order, with its type
SCHEMA: tuple[tuple[str, ColumnType], ...] = (
    *((c, "string") for c in BMNE_COLUMNS),
    ("id", "string"), ("source", "string"), ("source_id", "string"), ("instance", "string"),
    ("target", "string"), ("pitfalls", "string"), ("tag_source", "string"), ("dimension_evidence", "string"),
    ("edits", "string"), ("sentence_origins", "string"), ("item_flags", "string"), ("source_file", "string"),
    ("source_sha256", "string"), ("source_row", "int64"), ("source_format", "string"),
    # issue 31: who decided the pair (rule:<name>, judge:<model>, review) and the lower bound of that
    # rule's measured reliability (empty when unmeasured or decided in review)
    ("decided_by", "string"), ("confidence", "float64"),
)
COLUMNS: tuple[str, ...] = tuple(c for c, _ in SCHEMA)
#: columns where an empty value means "none" and is written as a null outside CSV
NULLABLE: frozenset[str] = frozenset({"category", "target", "tag_source", "source_row", "confidence"})
JSON_COLUMNS: tuple[str, ...] = ("dimension_evidence", "edits", "sentence_origins", "item_flags")


def typed_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The export table with pandas' nullable dtypes (``string``, ``Int64``); empty → <NA> where nullable.

    >>> df = typed_frame([{c: "" for c in COLUMNS} | {"sent_more": "a", "source_row": 3}])
    >>> str(df.dtypes["source_row"]), df.loc[0, "category"] is pd.NA, df.loc[0, "sent_more"]
    ('Int64', True, 'a')
    """
    df = pd.DataFrame(rows, columns=list(COLUMNS))
    for column, kind in SCHEMA:
        values = df[column].map(lambda v: None if v is None or (column in NULLABLE and v == "") else v)
        df[column] = values.astype({"int64": "Int64", "float64": "Float64"}.get(kind, "string"))
    return df


def hf_features():  # -> datasets.Features (datasets imported lazily: it is slow to import)
    """``datasets.Features`` of :data:`SCHEMA`."""
    import datasets

    return datasets.Features({c: datasets.Value(kind) for c, kind in SCHEMA})


def read_export_table(path) -> pd.DataFrame:  # path: str | os.PathLike
    """``pairs.csv`` or ``pairs.parquet`` of an export as :func:`typed_frame` (CSV's empty fields → nulls)."""
    from pathlib import Path

    path = Path(path)
    if path.suffix.lower() == ".parquet":
        raw = pd.read_parquet(path)
    else:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    records = raw.astype(object).where(raw.notna(), None).to_dict("records")
    def cell(k: str, v: Any) -> Any:
        if v in (None, ""):
            return v
        return int(v) if k == "source_row" else float(v) if k == "confidence" else v

    return typed_frame([{k: cell(k, v) for k, v in r.items()} for r in records])
