"""File helpers shared by the loaders: checksums and strict text decoding."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
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


def check_input_file(path: str | Path) -> Path:
    """``path`` as a regular, readable file, or a DataFormatError that says honestly why not.

    ``Path.exists()`` answers False for a symlink loop, a dangling link and an unreadable
    folder alike, and a FIFO would block the reader forever; each gets its own message here.
    """
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataFormatError(p, "too many levels of symbolic links (a symlink loop): fix the link") from None
        if exc.errno == errno.ENOENT and os.path.islink(p):
            raise DataFormatError(p, f"is a symbolic link to {os.readlink(p)!r}, which does not exist") from None
        if exc.errno == errno.ENOENT:
            raise DataFormatError(p, "file does not exist") from None
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise DataFormatError(p, "permission denied (a folder on the path cannot be entered)") from None
        if exc.errno == errno.ENOTDIR:
            raise DataFormatError(p, "a part of the path is a file, not a folder") from None
        raise DataFormatError(p, f"cannot be read: {exc.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise DataFormatError(p, "is a directory, expected a data file")
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode) or stat.S_ISCHR(st.st_mode):
        kind = "a FIFO or pipe (process substitution?)" if stat.S_ISFIFO(st.st_mode) else "not a regular file"
        raise DataFormatError(p, f"is {kind}: give a regular file (the loader reads it more than once)")
    if not os.access(p, os.R_OK):
        raise DataFormatError(p, "permission denied: the file is not readable")
    return p


def read_text_strict(path: str | Path) -> str:
    """Read a UTF-8 file (a leading BOM is dropped); undecodable bytes name their line.

    Windows line endings are normalised to ``\\n``.
    """
    p = check_input_file(path)
    from stereoset_eval.foundation.limits import MAX_INPUT_BYTES

    if p.stat().st_size > MAX_INPUT_BYTES:
        raise DataFormatError(p, f"file is {p.stat().st_size:,} bytes; larger than any benchmark "
                                 f"(limit {MAX_INPUT_BYTES:,}): is it the right file?")
    raw = p.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFormatError(
            p, f"not valid UTF-8 (byte {raw[exc.start]:#04x} at offset {exc.start})", row=line
        ) from None
    return text.replace("\r\n", "\n")
