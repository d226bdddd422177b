"""A command's output folder, replaced as a whole set — and only if it is ours to replace.

:func:`output_folder` builds the new set of files in a fresh temporary folder beside the
destination and swaps it in with one atomic exchange (``renameat2(RENAME_EXCHANGE)`` on Linux),
so a kill, a full disk or a crash at any moment leaves either the old complete set or the new
complete set — never ``scores.csv`` of one run beside ``report.*`` of another, and never a
stale file of an earlier run (``predictions.json`` of another benchmark) in the new set.

A marker file (:data:`MARKER`) in every output names the command that wrote it and, for a run
(``study``, ``score``), the run's *identity*: what changes its numbers (models, benchmarks,
methods, options, limit …), never where things were read or cached. An existing folder is
replaced only when its marker says it is an earlier output of the *same* command (or it is
empty) and — when the caller gives an identity — of the same run; a different run is refused
with one line naming the differing fields unless ``overwrite`` is set. Any other folder, a file,
a symlink, the working directory or an empty path is refused with a clear error and nothing is
touched: no command deletes what it did not create (``overwrite`` never changes that). This is
the one run-folder guard of every command.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping

from stereoset_eval.foundation.atomic import exchange
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.oserrors import problem_of

MARKER = ".stereoset-eval-output.json"
_OWNER = ".stereoset-eval-building"  # pid of the process building a temporary folder


class OutputFolderError(StereosetEvalError):
    """The output path cannot be (re)placed: a file, someone else's folder, an empty path …"""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path, self.problem = str(path), problem
        super().__init__(f"output {str(path)!r}: {problem}")


def output_path(text: str) -> Path:
    """``argparse`` type of ``--output`` / ``--out``: an empty path would mean the working directory."""
    import argparse

    if not str(text).strip():
        raise argparse.ArgumentTypeError("the output path is empty; give a folder to write into")
    return Path(text).expanduser()


def read_marker(folder: Path) -> dict | None:
    """The marker of ``folder`` (None when there is none or it cannot be read)."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _as_json(identity: Mapping[str, Any]) -> dict[str, Any]:
    """``identity`` as the marker stores it (tuples become lists, paths strings)."""
    return json.loads(json.dumps(dict(identity), sort_keys=True, default=str))


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The top-level fields in which two run identities differ, sorted."""
    a, b = _as_json(old), _as_json(new)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _check_identity(dest: Path, marker: Mapping[str, Any], command: str, identity: Mapping[str, Any]) -> None:
    stored = marker.get("identity")
    if not isinstance(stored, Mapping):
        raise OutputFolderError(dest, f"holds an output of `stereoset-eval {command}` that records no run identity "
                                      "(an older version wrote it): choose another folder, or pass --overwrite to "
                                      "replace it")
    diff = differences(stored, identity)
    if diff:
        raise OutputFolderError(dest, f"holds a different `{command}` run (differs in {', '.join(diff)}): choose "
                                      "another folder, or pass --overwrite to replace it")


def check_replaceable(dest: str | Path, *, command: str, identity: Mapping[str, Any] | None = None,
                      overwrite: bool = False) -> Path:
    """``dest`` as a Path if :func:`output_folder` may write there; else :class:`OutputFolderError`.

    Args:
        identity: the run's identity (JSON-able); an earlier output of another run is refused
            unless ``overwrite``. None: any earlier output of ``command`` may be replaced.
        overwrite: replace an earlier output of ``command`` even if it is a different run.
    """
    if not str(dest).strip():
        raise OutputFolderError(dest, "is empty; give a folder to write into")
    dest = Path(dest).expanduser()
    blocking = next((p for p in dest.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise OutputFolderError(dest, f"a part of the path, {str(blocking)!r}, is a file, not a folder")
    if dest.is_symlink():
        raise OutputFolderError(dest, "is a symbolic link; give the folder itself (nothing was written)")
    anchor = next((p for p in (dest.parent, *dest.parent.parents) if p.exists()), None)
    if anchor is not None and not os.access(anchor, os.W_OK | os.X_OK):  # the new set is built beside dest
        raise OutputFolderError(dest, f"cannot be written: the folder {str(anchor)!r} is not writable (permission "
                                      "denied or a read-only file system); choose another folder (nothing was written)")
    if not dest.exists():
        return dest
    if not dest.is_dir():
        raise OutputFolderError(dest, "is a file, not a folder: give a folder path (the file was left as it is)")
    here = Path.cwd().resolve()
    if dest.resolve() == here or dest.resolve() in here.parents:
        raise OutputFolderError(dest, "is the working directory (or holds it); give a folder of its own")
    try:
        empty = not any(p.name != _OWNER for p in dest.iterdir())  # our own temporary folder counts as empty
    except OSError as exc:
        raise OutputFolderError(dest, f"cannot be listed ({exc.strerror}); choose another folder") from None
    if empty:
        return dest
    marker = read_marker(dest)
    if marker is None:
        raise OutputFolderError(dest, f"exists and is not an output of `stereoset-eval {command}` (no {MARKER} "
                                      "in it): choose a new folder, or empty this one yourself; nothing was deleted")
    if marker.get("command") != command:
        raise OutputFolderError(dest, f"holds the output of `stereoset-eval {marker.get('command')}`, not of "
                                      f"`stereoset-eval {command}`: choose another folder; nothing was deleted")
    if identity is not None and not overwrite:
        _check_identity(dest, marker, command, identity)
    return dest


def swap_in(tmp: Path, dest: Path) -> None:
    """Put the folder ``tmp`` at ``dest``; the folder it replaces is deleted afterwards."""
    if not dest.exists():
        os.rename(tmp, dest)
        return
    if exchange(tmp, dest):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old set
        return
    old = dest.with_name(f".{dest.name}.old-{os.getpid()}")
    os.replace(dest, old)
    os.replace(tmp, dest)
    shutil.rmtree(old, ignore_errors=True)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_builds(dest: Path) -> None:
    """Delete temporary folders a killed run of ours left beside ``dest`` (they carry our owner file)."""
    for tmp in dest.parent.glob(f".{dest.name}.*.tmp"):
        try:
            pid = int((tmp / _OWNER).read_text().strip())
        except (OSError, ValueError):
            continue
        if not _pid_alive(pid):
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def output_folder(dest: str | Path, *, command: str, identity: Mapping[str, Any] | None = None,
                  overwrite: bool = False) -> Iterator[Path]:
    """Yield a fresh temporary folder; on success it replaces ``dest`` as a whole set.

    Args:
        dest: the output folder the user named.
        command: the subcommand writing it (recorded in the marker; an existing folder must
            carry the same one to be replaced).
        identity, overwrite: the run's identity, recorded in the marker and compared with the
            existing folder's (see :func:`check_replaceable`).

    Raises:
        OutputFolderError: ``dest`` may not be replaced (see the module docstring); raised
            before anything is written.
    """
    dest = check_replaceable(dest, command=command, identity=identity, overwrite=overwrite)
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_builds(dest)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)
        (tmp / _OWNER).write_text(str(os.getpid()))
        try:
            yield tmp
        except OSError as exc:  # a full disk, a read-only file system … while writing the new set
            if exc.errno is None:
                raise
            problem = problem_of(exc)
            error: OutputFolderError | None = OutputFolderError(dest, f"writing the new set failed: {problem}; the folder was left as it was")
        else:
            error = None
        if error is not None:
            raise error
        (tmp / _OWNER).unlink(missing_ok=True)  # a nested output_folder may have swapped it away
        files = sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if p.is_file() and p.name != MARKER)
        record: dict[str, Any] = {"command": command, "files": files, "tool": "stereoset-eval"}
        if identity is not None:
            record["identity"] = _as_json(identity)
        (tmp / MARKER).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        # still ours (nothing else appeared there meanwhile)
        check_replaceable(dest, command=command, identity=identity, overwrite=overwrite)
        swap_in(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
