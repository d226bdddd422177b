"""The form in which two benchmark sentences are compared for "identical".

Two sentences that differ only by whitespace, zero-width or control characters (a NUL, a
soft hyphen) or Unicode compatibility forms (a full-width letter, a ligature) are the same
sentence to a reader, and a model scores them as an exact or near tie: the pair cannot
discriminate. :func:`comparison_form` maps both to one string: NFKC, format (``Cf``) and
control (``Cc``) characters removed, every whitespace run collapsed to one space, stripped.
"""

from __future__ import annotations

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def comparison_form(text: str) -> str:
    """``text`` normalised for an equality test (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(" " if ch in "\t\n\r\v\f" else ch for ch in text
                   if unicodedata.category(ch) not in ("Cf", "Cc") or ch in "\t\n\r\v\f")
    return _WHITESPACE.sub(" ", text).strip()


def how_they_differ(a: str, b: str) -> str:
    """``""`` when ``a == b`` exactly, else what normalisation removed (for a flag's message)."""
    if a == b:
        return ""
    if a.strip() == b.strip():
        return "leading/trailing whitespace"
    kinds = []
    strip = lambda s: "".join(c for c in s if unicodedata.category(c) not in ("Cf", "Cc"))  # noqa: E731
    if strip(a) != a or strip(b) != b:
        kinds.append("zero-width/control characters")
    if _WHITESPACE.sub(" ", strip(a)).strip() == _WHITESPACE.sub(" ", strip(b)).strip():
        return " and ".join(kinds) or "whitespace"
    kinds.append("whitespace" if _WHITESPACE.sub(" ", a) != a or _WHITESPACE.sub(" ", b) != b else "")
    kinds.append("Unicode compatibility forms (NFKC)")
    return ", ".join(k for k in kinds if k)
