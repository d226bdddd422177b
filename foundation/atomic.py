"""Atomic file writes: write to a temporary file in the same folder, fsync, rename.

An interrupted write never leaves a half file where a good one was: readers see either the
old file or the new one. Every file the toolkit writes goes through these helpers.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(dest: str | os.PathLike[str], *, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside ``dest``; on success it is renamed onto ``dest``.

    Use it for writers that want a filename (``df.to_parquet(tmp)``, ``fig.savefig(tmp)``).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=suffix + ".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp_path
        with open(tmp_path, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, dest)
    finally:
        tmp_path.unlink(missing_ok=True)


def atomic_write_bytes(dest: str | os.PathLike[str], data: bytes) -> Path:
    with atomic_path(dest) as tmp:
        tmp.write_bytes(data)
    return Path(dest)


def atomic_write_text(dest: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> Path:
    return atomic_write_bytes(dest, text.encode(encoding))


def atomic_write_json(dest: str | os.PathLike[str], obj: Any, *, indent: int = 2) -> Path:
    """JSON with sorted keys and a trailing newline, so equal data gives equal bytes."""
    return atomic_write_text(dest, json.dumps(obj, indent=indent, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2``); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), 2) == 0:
        return True
    err = ctypes.get_errno()
    if err in (22, 38, 95):  # EINVAL / ENOSYS / EOPNOTSUPP: this file system cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


@contextmanager
def atomic_directory(dest: str | os.PathLike[str]) -> Iterator[Path]:
    """Build a directory under a temporary name and swap it into place at the end.

    For multi-file outputs (``datasets.save_to_disk``): a crash leaves the old directory (the
    swap is one atomic exchange where the system has ``renameat2``).
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
        if dest.exists() and exchange(tmp, dest):
            return  # tmp now holds the old directory; the finally below removes it
        old = None
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
            os.replace(dest, old)
        os.replace(tmp, dest)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
