"""One timing run per machine: ``speed.run`` holds an exclusive lock while it measures.

Two runs started on the same machine share its cores, and both runs' numbers are then wrong
without either saying so: the twenty-second issue-35 session lost a full run this way (two runs
for ten minutes, every fixture round 3-15x its usual time). The lock is an advisory ``flock`` on
one file per machine (in the temporary folder unless ``--lock`` names another), released by the
kernel when the holder exits, however it exits, so a crashed run never leaves the machine locked.
The file holds the holder's pid and start time for the refusal message; it is never deleted
(another run may be about to lock it).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from stereoset_eval.foundation.oserrors import problem_of

LOCK_NAME = "stereoset-eval-speed-run.lock"


class MachineLockError(RuntimeError):
    """The machine's lock cannot be taken: another timing run holds it, or its file cannot be opened."""


def default_lock_path() -> Path:
    """``<the temporary folder>/stereoset-eval-speed-run.lock``: one per machine for every checkout."""
    return Path(tempfile.gettempdir()) / LOCK_NAME


@contextlib.contextmanager
def machine_lock(path: Path) -> Iterator[None]:
    """Hold ``path``'s exclusive lock for the block; :class:`MachineLockError` at once if another
    process holds it (naming the holder) or the file cannot be opened."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # a lock, not data (as the score cache's)
    except OSError as exc:
        raise MachineLockError(f"cannot open the lock file {path}: {problem_of(exc)}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "a process that wrote no pid"
            raise MachineLockError(f"another speed.run is measuring on this machine ({holder}; lock {path}): "
                                   "two runs share the cores and both runs' numbers would be wrong; wait for "
                                   "it to finish") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}, started {datetime.now(timezone.utc).isoformat(timespec='seconds')}\n"
                  .encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)  # closing the file releases the lock
