"""The provenance block every report carries.

Everything that could change a number is recorded: tool version and git commit, sha256 of
every data and score file, model id and revision, method and every option, n per slice,
library versions. The wall-clock time lives in ONE field, ``timestamp``, so two runs on the
same inputs give byte-identical outputs apart from that field.
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable, Mapping

from stereoset_eval import __version__
from stereoset_eval.foundation.files import file_sha256  # noqa: F401  (re-exported for report code)

LIBRARIES: tuple[str, ...] = ("numpy", "scipy", "pandas", "matplotlib", "torch", "transformers", "tokenizers")
TIMESTAMP_FIELD = "timestamp"
REPO_ROOT = Path(__file__).resolve().parent.parent




def git_commit(repo: Path = REPO_ROOT) -> str | None:
    """HEAD of the toolkit's git checkout (``+dirty`` with uncommitted changes), None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def library_versions(names: Iterable[str] = LIBRARIES) -> dict[str, str | None]:
    """Installed versions (read from package metadata: nothing is imported, torch included)."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def utc_timestamp() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def build_provenance(
    *,
    data_files: Iterable[str | Path] = (),
    score_files: Iterable[str | Path] = (),
    model: str | None = None,
    revision: str | None = None,
    method: str | None = None,
    options: Mapping[str, Any] | None = None,
    n_per_slice: Mapping[str, int] | None = None,
    scores_provenance: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
    timestamp: str | None = None,
) -> dict[str, Any]:
    """The provenance dict of a report or a results file.

    Args:
        data_files / score_files: files read; recorded with their sha256.
        model, revision, method: what produced the scores (from the score file's own
            provenance when it has one).
        options: every option of the metrics (bootstrap, tie rule, rounding, grouping …).
        n_per_slice: number of units per reported slice.
        scores_provenance: the scorer's own provenance block, kept verbatim.
        timestamp: fixed timestamp (tests); default now, UTC.
    """
    return {
        "tool": {"name": "stereoset-eval", "version": __version__, "git_commit": git_commit()},
        "data_files": [{"path": str(p), "sha256": file_sha256(p)} for p in data_files],
        "score_files": [{"path": str(p), "sha256": file_sha256(p)} for p in score_files],
        "model": {"id": model, "revision": revision},
        "method": method,
        "options": dict(options or {}),
        "n_per_slice": dict(n_per_slice or {}),
        "scores_provenance": dict(scores_provenance or {}),
        "libraries": library_versions(),
        "extra": dict(extra or {}),
        TIMESTAMP_FIELD: timestamp or utc_timestamp(),
    }
