"""File helpers shared by the loaders: checksums and strict text decoding."""

from __future__ import annotations

import hashlib
from pathlib import Path

from stereoset_eval.foundation.errors import DataFormatError


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file's bytes (recorded in every item's provenance)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def git_blob_sha1(path: str | Path) -> str:
    """Git's blob id of a file: sha1 of ``b"blob <size>\\0" + bytes``."""
    data = Path(path).read_bytes()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_text_strict(path: str | Path) -> str:
    """Read a UTF-8 file (a leading BOM is dropped); undecodable bytes name their line.

    Windows line endings are normalised to ``\\n``.
    """
    p = Path(path)
    if not p.exists():
        raise DataFormatError(p, "file does not exist")
    if p.is_dir():
        raise DataFormatError(p, "is a directory, expected a data file")
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFormatError(
            p, f"not valid UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})", row=line
        ) from None
    return text.replace("\r\n", "\n")
