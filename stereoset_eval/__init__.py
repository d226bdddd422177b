"""stereoset-eval: load, curate, score and analyse stereotype-bias benchmarks.

The library API (what the command line calls; lm-eval users know it as ``simple_evaluate``)::

    import stereoset_eval
    result = stereoset_eval.evaluate("bert-base-uncased", benchmarks=["stereoset", "crows-pairs"],
                                     settings=stereoset_eval.RunSettings(device="cpu"))
    print(result.table())
    run = stereoset_eval.run_study(stereoset_eval.load_config("my_study.toml"))

:func:`evaluate` (:mod:`stereoset_eval.study.evaluate_api`) returns an :class:`EvaluationResult`;
:func:`run_study` (:mod:`stereoset_eval.study.run`) a ``StudyRun``. Both are loaded on first use,
so ``import stereoset_eval`` stays light.

One import namespace; its layers (dependencies flow one way, upward imports are a test failure):

* :mod:`stereoset_eval.foundation` — the item model, errors, atomic files, provenance;
* :mod:`stereoset_eval.curation` — loaders, pitfall rules, gender swaps, dimension tags, Label Studio;
* :mod:`stereoset_eval.scoring` — language-model scores, faithful to the reference code;
* :mod:`stereoset_eval.analysis` — metrics, bootstrap, correlation, reports;
* :mod:`stereoset_eval.study` — many models over many benchmarks, one report; the library API;
* :mod:`stereoset_eval.cli` — the ``stereoset-eval`` command line.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from stereoset_eval.scoring.settings import RunSettings
    from stereoset_eval.study.config import StudyConfig, load_config
    from stereoset_eval.study.evaluate_api import EvaluationResult, evaluate
    from stereoset_eval.study.report_run import ReportOptions
    from stereoset_eval.study.run import StudyRun, run_study

#: public name -> the module that defines it (imported on first use)
_API = {
    "evaluate": "stereoset_eval.study.evaluate_api",
    "EvaluationResult": "stereoset_eval.study.evaluate_api",
    "ReportOptions": "stereoset_eval.study.report_run",
    "RunSettings": "stereoset_eval.scoring.settings",
    "run_study": "stereoset_eval.study.run",
    "StudyRun": "stereoset_eval.study.run",
    "StudyConfig": "stereoset_eval.study.config",
    "load_config": "stereoset_eval.study.config",
}

__all__ = ["EvaluationResult", "ReportOptions", "RunSettings", "StudyConfig", "StudyRun", "__version__", "evaluate",
           "load_config", "run_study"]


def __getattr__(name: str) -> Any:
    if name in _API:
        return getattr(import_module(_API[name]), name)
    raise AttributeError(f"module 'stereoset_eval' has no attribute {name!r}")
