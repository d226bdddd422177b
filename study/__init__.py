"""Multi-model studies: many models × benchmarks × methods → one cross-benchmark report.

``stereoset-eval study CONFIG.toml`` (and ``stereoset-eval demo``) run
:func:`~stereoset_eval.study.run.run_study`. One module per job:

* :mod:`stereoset_eval.study.config` — the TOML study file (:class:`StudyConfig`), read by
  :mod:`~stereoset_eval.study.config_parse` and checked by :mod:`~stereoset_eval.study.config_validate`;
* :mod:`stereoset_eval.study.benchmarks` — the items of each benchmark (load, curate, filter, limit);
* :mod:`stereoset_eval.study.plan` — (model, benchmark, method) jobs, model kinds, protocols;
* :mod:`stereoset_eval.study.executors` — ``local`` and ``ray`` executors over :func:`stereoset_eval.scoring.score_items`;
* :mod:`stereoset_eval.study.analyse` — metrics per job, Spearman ρ per protocol (Tables 4–6);
* :mod:`stereoset_eval.study.report` / :mod:`stereoset_eval.study.plots` — the report sections and Figure 2;
* :mod:`stereoset_eval.study.run` — the pipeline and the files it writes.

Nothing here imports torch at module level: scoring runs inside the executors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stereoset_eval.study.config import StudyConfig, default_config, load_config, parse_config

if TYPE_CHECKING:
    from stereoset_eval.study.run import StudyRun, run_study

__all__ = ["StudyConfig", "StudyRun", "default_config", "load_config", "parse_config", "run_study"]


def __getattr__(name: str) -> Any:
    """``StudyRun`` / ``run_study`` on first use: the pipeline pulls in scipy and matplotlib (~1 s),
    which the CLI's start-up (``--help``, every other command) should not pay for."""
    if name in ("StudyRun", "run_study"):
        from stereoset_eval.study import run

        return getattr(run, name)
    raise AttributeError(f"module 'stereoset_eval.study' has no attribute {name!r}")
