"""Run folders of limited runs: a ``--limit N`` run never lands in the folder of a full run.

The guard against overwriting a *different* run is the output folder's marker
(:func:`stereoset_eval.foundation.outputs.check_replaceable` with the run's identity:
:func:`stereoset_eval.study.run.study_identity`, :func:`stereoset_eval.cli.commands.score.score_identity`).
"""

from __future__ import annotations

from pathlib import Path


def limited_folder(folder: str | Path, limit: int | None) -> str:
    """The default folder of a ``--limit N`` run: ``runs/demo`` -> ``runs/demo-limit-N``."""
    return str(folder) if not limit else f"{str(folder).rstrip('/')}-limit-{limit}"
