"""Remove secrets from text before it is shown, logged or cut short.

Scrubbing must come *before* any truncation: a key that straddles the cut would otherwise
survive in part (41 of 42 characters) and no longer match the key. :func:`scrub` replaces

* every given secret and every secret held in the environment (:data:`SECRET_ENV`),
* the ``user:password@`` part of any URL,
* ``Authorization``-style values (``Token …``, ``Bearer …``) and Hugging Face tokens (``hf_…``).
"""

from __future__ import annotations

import os
import re

SECRET_ENV: tuple[str, ...] = ("LABEL_STUDIO_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
MASK = "***"
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_AUTH_VALUE = re.compile(r"(?P<kind>\b(?:Token|Bearer|Basic)\s+)(?P<value>[A-Za-z0-9._~+/=-]{6,})")
_HF_TOKEN = re.compile(r"\bhf_[A-Za-z0-9]{8,}")


def environment_secrets() -> list[str]:
    """The non-trivial secret values of :data:`SECRET_ENV` that are set."""
    return [v.strip() for name in SECRET_ENV if len((v := os.environ.get(name) or "").strip()) >= 4]


def scrub(text: str, *secrets: str) -> str:
    """``text`` with every secret masked (see the module docstring); apply before cutting text."""
    values = sorted({s for s in (*secrets, *environment_secrets()) if s and len(s) >= 4}, key=len, reverse=True)
    for value in values:
        text = text.replace(value, MASK)
    text = _URL_USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _AUTH_VALUE.sub(lambda m: f"{m['kind']}{MASK}", text)
    return _HF_TOKEN.sub(MASK, text)


def shorten(text: str, limit: int, *secrets: str) -> str:
    """Scrub, then cut ``text`` to ``limit`` characters (never the other way round)."""
    text = scrub(text, *secrets)
    return text if len(text) <= limit else text[: limit - 1] + "…"
