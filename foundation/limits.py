"""Size limits checked while loading, before anything large is built from the input.

A benchmark sentence is a few hundred characters; a field of megabytes is a broken file
(an unbalanced quote joins every following row into one field) and, scored, would allocate
gigabytes of masked copies before any length check ran. Loaders call :func:`check_field`
on every text field, so the error names the file, the row and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from stereoset_eval.foundation.errors import DataFormatError

MAX_FIELD_CHARS = 10_000
MAX_INPUT_BYTES = 2 * 1024**3


def multiline_hint(values: Iterable[Any], *, shifted: bool = False) -> str:
    """A hint for a row whose fields were shifted or joined by a stray quote.

    ``shifted``: the caller saw a value that belongs to another column (a bias type where the
    direction should be) — with a quote character inside a field, or a line break, that is a
    quote the CSV reader paired wrongly, not a wrong label.
    """
    texts = [v for v in values if isinstance(v, str)]
    if any("\n" in v for v in texts):
        return " (a field of this row spans several lines: an unbalanced quote?)"
    if shifted or any('"' in v for v in texts):
        return " (the fields of this row look shifted by a column: a stray or unbalanced quote in this row?)"
    return ""


def check_field(path: str | Path | None, value: Any, *, row: int | None, field: str,
                limit: int = MAX_FIELD_CHARS, table_sep: str | None = None) -> None:
    """Refuse a text field longer than ``limit`` characters (see the module docstring).

    ``table_sep``: the field comes from a table with this separator; a field that spans lines
    *and* holds the separator is rows joined by a quote left open (a real sentence may break
    a line — CrowS-Pairs row 1294 does — but does not carry the row structure with it).
    """
    if table_sep and isinstance(value, str) and "\n" in value and table_sep in value and len(value) <= limit:
        raise DataFormatError(path, f"the field spans {value.count(chr(10)) + 1} lines: an unbalanced quote in this "
                                    "row joined the following rows into it (close the quote)", row=row, field=field)
    if isinstance(value, str) and len(value) > limit:
        hint = " — an unbalanced quote?" if value.count("\n") else ""
        raise DataFormatError(path, f"field is {len(value):,} characters long (the limit is {limit:,}; "
                                    f"{value.count(chr(10)):,} line breaks inside){hint}", row=row, field=field)

#: bootstrap resamples: beyond this, resamples x 10k items x 8 bytes exceeds 8 GB after all the scoring
MAX_RESAMPLES = 100_000
