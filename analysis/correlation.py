"""Do two benchmarks rank models alike? Spearman ρ across models, overall and per category.

* :func:`spearman`: ρ and scipy's p-value (t approximation), plus an optional permutation
  p-value for small model sets (``scipy.stats.permutation_test``, pairings, two-sided; exact
  when n! ≤ ``permutations``, otherwise Monte Carlo with the given seed).
* :func:`benchmark_correlation` / :func:`correlation_by_category`: from a long table of
  per-model scores (BMNE paper Table 5: one ρ per stereotype category).
* :func:`balance_table`: per-model pre-/post-balance scores of two benchmarks with the ρ of
  each column pair (BMNE paper Table 6 layout).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from stereoset_eval.analysis.errors import preview
from stereoset_eval.foundation.errors import StereosetEvalError

MIN_MODELS = 3
#: the per-model scores of a balance table (Table 6) and their optional CI bounds
SCORE_COLUMNS: tuple[str, ...] = ("x_pre", "y_pre", "x_post", "y_post")
CI_COLUMNS: tuple[str, ...] = tuple(f"{c}_{end}" for c in SCORE_COLUMNS for end in ("low", "high"))
LONG_COLUMNS: tuple[str, ...] = ("model", "benchmark", "category", "value")


class CorrelationInputError(StereosetEvalError, ValueError):
    """The per-model score table cannot be correlated (too few models, models missing, NaN)."""


@dataclass(frozen=True)
class Correlation:
    """Spearman ρ between two score lists over the same models."""

    rho: float
    p_value: float
    n: int
    x_name: str = "x"
    y_name: str = "y"
    labels: tuple[str, ...] = ()
    x_values: tuple[float, ...] = ()
    y_values: tuple[float, ...] = ()
    permutation_p_value: float | None = None
    n_permutations: int | None = None
    permutation_exact: bool | None = None
    seed: int | None = None
    method: str = "spearman (scipy.stats.spearmanr; p from the t approximation)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "x": self.x_name,
            "y": self.y_name,
            "n": self.n,
            "rho": self.rho,
            "p_value": self.p_value,
            "permutation_p_value": self.permutation_p_value,
            "n_permutations": self.n_permutations,
            "permutation_exact": self.permutation_exact,
            "seed": self.seed,
            "models": list(self.labels),
            "x_values": list(self.x_values),
            "y_values": list(self.y_values),
        }

    def format(self) -> str:
        """``ρ = 0.604 (p = 0.0062, n = 19)``."""
        text = f"ρ = {self.rho:.3f} (p = {self.p_value:.2g}"
        if self.permutation_p_value is not None:
            text += f", permutation p = {self.permutation_p_value:.2g}"
        return text + f", n = {self.n})"


def spearman(
    x: Sequence[float],
    y: Sequence[float],
    *,
    permutations: int | None = None,
    seed: int = 0,
    labels: Sequence[str] = (),
    x_name: str = "x",
    y_name: str = "y",
) -> Correlation:
    """Spearman ρ of ``x`` and ``y`` with scipy's p-value and, optionally, a permutation p-value.

    Args:
        x, y: one value per model, same order.
        permutations: number of permutations for the permutation p-value (None: skip it).
            When n! ≤ permutations every permutation is enumerated (exact test).
        seed: seed of the Monte Carlo permutations.

    >>> c = spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], permutations=1000)
    >>> round(c.rho, 2), round(c.p_value, 3), c.permutation_exact, round(c.permutation_p_value, 3)
    (0.8, 0.104, True, 0.133)
    """
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise CorrelationInputError(f"x and y must be two lists of equal length, got {xa.shape} and {ya.shape}")
    if xa.size < MIN_MODELS:
        raise CorrelationInputError(f"Spearman needs at least {MIN_MODELS} models, got {xa.size}")
    if not (np.isfinite(xa).all() and np.isfinite(ya).all()):
        raise CorrelationInputError("x and y must be finite numbers (NaN or inf found)")
    constant = [name for name, a in ((x_name, xa), (y_name, ya)) if np.all(a == a[0])]
    if constant:
        raise CorrelationInputError(f"{', '.join(constant)}: the same value for every model; Spearman ρ is undefined")
    from scipy import stats  # here, not at import: scipy.stats costs ~0.5 s of every command's start

    res = stats.spearmanr(xa, ya)
    rho, p = float(res.statistic), float(res.pvalue)
    perm_p = exact = None
    if permutations is not None:
        rx, ry = stats.rankdata(xa), stats.rankdata(ya)

        def statistic(r: np.ndarray, axis: int = -1) -> np.ndarray:
            rc = r - r.mean(axis=axis, keepdims=True)
            yc = ry - ry.mean()
            return (rc * yc).sum(axis=axis) / np.sqrt((rc**2).sum(axis=axis) * (yc**2).sum())

        perm = stats.permutation_test(
            (rx,),
            statistic,
            permutation_type="pairings",
            vectorized=True,
            n_resamples=permutations,
            alternative="two-sided",
            rng=np.random.default_rng(seed),
        )
        perm_p = float(perm.pvalue)
        exact = math.factorial(xa.size) <= permutations
    return Correlation(
        rho=rho,
        p_value=p,
        n=int(xa.size),
        x_name=x_name,
        y_name=y_name,
        labels=tuple(labels),
        x_values=tuple(float(v) for v in xa),
        y_values=tuple(float(v) for v in ya),
        permutation_p_value=perm_p,
        n_permutations=permutations,
        permutation_exact=exact,
        seed=seed if permutations is not None else None,
    )


def _check_long(table: pd.DataFrame) -> None:
    missing = [c for c in LONG_COLUMNS if c not in table.columns]
    if missing:
        raise CorrelationInputError(f"score table lacks column(s) {missing}; needs {list(LONG_COLUMNS)}")


def _paired(table: pd.DataFrame, x: str, y: str) -> tuple[list[str], list[float], list[float]]:
    """Models with a value on both benchmarks; a model on only one side is an error."""
    sides = {}
    for bench in (x, y):
        rows = table[table["benchmark"] == bench]
        if rows.empty:
            raise CorrelationInputError(
                f"no scores for benchmark {bench!r}; have {sorted(table['benchmark'].unique())}"
            )
        dup = rows["model"][rows["model"].duplicated()].tolist()
        if dup:
            raise CorrelationInputError(f"benchmark {bench!r} has more than one value for model(s) {preview(dup)}")
        sides[bench] = dict(zip(rows["model"], rows["value"].astype(float)))
    only = sorted(set(sides[x]) ^ set(sides[y]))
    if only:
        raise CorrelationInputError(f"model(s) scored on only one of {x!r}, {y!r}: {preview(only)}")
    models = sorted(sides[x])
    return models, [sides[x][m] for m in models], [sides[y][m] for m in models]


def benchmark_correlation(
    table: pd.DataFrame, x: str, y: str, *, category: str | None = None, permutations: int | None = None, seed: int = 0
) -> Correlation:
    """ρ between benchmarks ``x`` and ``y`` across models (rows of ``category`` only, if given).

    ``table`` is long: one row per (model, benchmark, category, value).
    """
    _check_long(table)
    rows = table if category is None else table[table["category"] == category]
    models, xs, ys = _paired(rows, x, y)
    return spearman(xs, ys, permutations=permutations, seed=seed, labels=models, x_name=x, y_name=y)


def correlation_by_category(
    table: pd.DataFrame, x: str, y: str, *, permutations: int | None = None, seed: int = 0
) -> dict[str, Correlation]:
    """One ρ per category (BMNE paper Table 5), categories in sorted order."""
    _check_long(table)
    return {
        str(cat): benchmark_correlation(table, x, y, category=cat, permutations=permutations, seed=seed)
        for cat in sorted(table["category"].dropna().unique())
    }


@dataclass(frozen=True)
class BalanceTable:
    """Per-model pre/post-balance scores of two benchmarks and the ρ of each stage (Table 6 layout)."""

    rows: pd.DataFrame
    pre: Correlation
    post: Correlation
    x_name: str
    y_name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "x": self.x_name,
            "y": self.y_name,
            "rows": self.rows.to_dict(orient="records"),
            "pre": self.pre.to_dict(),
            "post": self.post.to_dict(),
            "options": dict(self.options),
        }


def balance_table(
    scores: pd.DataFrame,
    *,
    x_name: str = "CrowS-Pairs",
    y_name: str = "StereoSet",
    permutations: int | None = None,
    seed: int = 0,
) -> BalanceTable:
    """Table 6 of the BMNE paper from a wide table of per-model scores.

    Args:
        scores: columns ``model``, ``x_pre``, ``y_pre``, ``x_post``, ``y_post`` (x = ``x_name``
            benchmark, y = ``y_name``; pre = unbalanced ss, post = balanced ss); optionally the
            CI bounds :data:`CI_COLUMNS` (``x_pre_low``, ``x_pre_high`` …), kept for the plots.
    """
    needed = ["model", *SCORE_COLUMNS]
    missing = [c for c in needed if c not in scores.columns]
    if missing:
        raise CorrelationInputError(f"balance table lacks column(s) {missing}; needs {needed}")
    rows = scores[needed + [c for c in CI_COLUMNS if c in scores.columns]].reset_index(drop=True)
    models = rows["model"].astype(str).tolist()
    kw = {"permutations": permutations, "seed": seed, "labels": models}
    pre = spearman(rows["x_pre"], rows["y_pre"], x_name=f"{x_name} pre", y_name=f"{y_name} pre", **kw)
    post = spearman(rows["x_post"], rows["y_post"], x_name=f"{x_name} post", y_name=f"{y_name} post", **kw)
    return BalanceTable(
        rows=rows,
        pre=pre,
        post=post,
        x_name=x_name,
        y_name=y_name,
        options={"permutations": permutations, "seed": seed},
    )
