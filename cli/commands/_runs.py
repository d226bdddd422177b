"""Run folders of limited runs: a ``--limit N`` run never lands in the folder of a full run.

The guard against overwriting a *different* run is the output folder's marker
(:func:`stereoset_eval.foundation.outputs.check_replaceable` with the run's identity:
:func:`stereoset_eval.study.run.study_identity`, :func:`stereoset_eval.study.score_run.score_identity`).
"""

from __future__ import annotations

from stereoset_eval.study.evaluate_api import limited_folder

__all__ = ["limited_folder"]
