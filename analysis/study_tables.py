"""Per-model results -> the tables the correlation functions take (for a multi-model study).

* :func:`long_scores`: one row per (model, benchmark, category, value) — input of
  :func:`~stereoset_eval.analysis.correlation.benchmark_correlation` and
  :func:`~stereoset_eval.analysis.correlation.correlation_by_category` (BMNE paper Table 5).
* :func:`pre_post_scores`: per model the unbalanced (pre) and balanced (post) ss of two
  benchmarks — input of :func:`~stereoset_eval.analysis.correlation.balance_table` (BMNE paper Table 6).
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from stereoset_eval.analysis.correlation import CorrelationInputError
from stereoset_eval.analysis.report_build import ModelResults

ALL = "all"


def long_scores(models: Sequence[ModelResults]) -> pd.DataFrame:
    """Stereotype scores of every model, benchmark and category.

    Categories: ``all`` (the headline ss / metric / pair ss), each StereoSet scope, each
    CrowS-Pairs bias type, and each balancing group (``all`` of a balanced benchmark is its
    unbalanced ss; its balanced ss is category ``balanced``).
    """
    rows = []
    for m in models:
        if m.stereoset is not None:
            for scope, s in m.stereoset.scopes.items():
                rows.append(
                    (m.model, f"StereoSet ({m.stereoset.variant})", ALL if scope == "overall" else scope, s.ss.value)
                )
        if m.crows is not None:
            rows.append((m.model, m.crows_benchmark, ALL, m.crows.metric.value))
            rows += [(m.model, m.crows_benchmark, b, r.value) for b, r in m.crows.per_bias_type.items()]
        for bench, r in m.pair_ss.items():
            rows.append((m.model, bench, ALL, r.value))
        for bench, bal in m.balanced.items():
            if bench not in m.pair_ss and not (m.crows is not None and bench == m.crows_benchmark):
                rows.append((m.model, bench, ALL, bal.unbalanced.value))
            rows.append((m.model, bench, "balanced", bal.balanced.value))
            rows += [(m.model, bench, g, s.ss) for g, s in bal.groups.items()]
    return pd.DataFrame(rows, columns=["model", "benchmark", "category", "value"])


def pre_post_scores(models: Sequence[ModelResults], x: str, y: str) -> pd.DataFrame:
    """Columns ``model, x_pre, y_pre, x_post, y_post`` from each model's balanced results of ``x`` and ``y``."""
    rows = []
    for m in models:
        missing = [b for b in (x, y) if b not in m.balanced]
        if missing:
            raise CorrelationInputError(f"model {m.model!r} has no balanced results for {missing}")
        bx, by = m.balanced[x], m.balanced[y]
        rows.append((m.model, bx.unbalanced.value, by.unbalanced.value, bx.balanced.value, by.balanced.value))
    return pd.DataFrame(rows, columns=["model", "x_pre", "y_pre", "x_post", "y_post"])
