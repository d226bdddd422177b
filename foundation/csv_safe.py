"""Formula-safe CSV cells: a text cell a spreadsheet would run as a formula is written as text.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read by Excel,
LibreOffice and Google Sheets as a formula (``=HYPERLINK(…)``: CSV injection, OWASP). The
usual convention is followed: such a cell is written with a leading apostrophe (``'=HYPERLINK(…)``),
which a spreadsheet shows as text. Plain numbers (``-3``, ``+1.5e-3``) are left alone: a
spreadsheet reads them as numbers, not formulas.

The mapping is reversible: a cell that already starts with an apostrophe followed by a formula
character or another apostrophe gets one more apostrophe, so :func:`unescape_cell` of
:func:`escape_cell` is always the original text. Only CSV exports use it: parquet, HF datasets and
JSON keep the exact text. Readers of the toolkit's own CSV exports (``pairs.csv``) undo it.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

#: first characters a spreadsheet takes as the start of a formula
FORMULA_CHARS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def starts_formula(text: str) -> bool:
    """True when a spreadsheet would read ``text`` as a formula (a plain number is not one)."""
    return bool(text) and text.startswith(FORMULA_CHARS) and not _NUMBER.fullmatch(text)


def unescape_cell(text: str) -> str:
    """The text :func:`escape_cell` was given (drops one apostrophe before a formula start or an apostrophe)."""
    if text.startswith("'") and (starts_formula(text[1:]) or text[1:].startswith("'")):
        return text[1:]
    return text


def escape_cell(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text (a leading apostrophe when needed)."""
    if starts_formula(text) or unescape_cell(text) != text:
        return "'" + text
    return text


def escape_value(value: Any) -> Any:
    """:func:`escape_cell` of a string; any other value (number, None, NaN) unchanged."""
    return escape_cell(value) if isinstance(value, str) else value


def safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with every text cell escaped (number columns untouched)."""
    out = df.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column].dtype):
            out[column] = out[column].map(escape_value)
    return out


def unsafe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`safe_frame` undone: the exact text of a CSV the toolkit wrote."""
    out = df.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column].dtype):
            out[column] = out[column].map(lambda v: unescape_cell(v) if isinstance(v, str) else v)
    return out
