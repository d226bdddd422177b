"""Operating-system errors in words: what went wrong with which file, and what to do."""

from __future__ import annotations

import errno

OS_PROBLEMS: dict[int, str] = {
    errno.ENOENT: "no such file or directory",
    errno.ELOOP: "too many levels of symbolic links (a symlink loop?): fix or remove the link",
    errno.EISDIR: "is a directory, where a file is expected",
    errno.ENOTDIR: "a part of this path is not a directory",
    errno.EACCES: "permission denied: check the file's permissions or choose another path",
    errno.EPERM: "operation not permitted: check the file's permissions or choose another path",
    errno.EROFS: "the file system is read-only: write the output somewhere else",
    errno.ENOSPC: "no space left on the device: free some space or write elsewhere (earlier outputs are unchanged)",
    errno.EDQUOT: "disk quota exceeded: free some space or write elsewhere (earlier outputs are unchanged)",
    errno.EFBIG: "file too large for this file system: write elsewhere",
    errno.ENAMETOOLONG: "file name too long",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n)",
    errno.ENXIO: "no such device (a FIFO without a writer, or a device file?): give a regular file",
    errno.EIO: "input/output error reading or writing the disk",
    errno.EXDEV: "cannot move files across file systems: put the output on the same disk as its folder",
}


def os_error_message(exc: OSError) -> str:
    """``<file>: <problem and what to do>`` for an operating-system error."""
    problem = OS_PROBLEMS.get(exc.errno or -1) or (exc.strerror or type(exc).__name__).lower()
    names = [str(n) for n in (exc.filename, exc.filename2) if n not in (None, "")]
    where = " -> ".join(names) if names else "a file"
    return f"{where}: {problem}"


def problem_of(exc: OSError) -> str:
    """The problem part alone (no file name)."""
    return OS_PROBLEMS.get(exc.errno or -1) or (exc.strerror or type(exc).__name__).lower()
