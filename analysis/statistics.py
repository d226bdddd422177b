"""Metrics as registered statistics over outcome arrays.

A :class:`Statistic` is one function of a sample of *outcome arrays* (one column per outcome
field — ``pro``, ``related``, ``target`` for StereoSet examples; ``hit``, ``neutral`` … for
CrowS-Pairs pairs; ``pref``, ``group`` for pair comparisons), vectorised over samples: every
column is 2-D, one row per sample, and the function returns one value per row (NaN where the
value is undefined on that sample).

The same function gives the point value (the full sample as a single row,
:meth:`Statistic.value`) and every bootstrap replicate
(:func:`stereoset_eval.analysis.bootstrap.estimate`), so a value and its interval agree by
construction. Each statistic declares its ideal value and its resampling strata (the column
whose value every resampled position keeps, e.g. ``target`` for the official StereoSet
numbers, or None when units are resampled freely).

Adding a metric: write its function over outcome arrays and :func:`register` it in the
module that builds those arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from stereoset_eval.foundation.registry import Registry


#: column name -> 2-D array (samples × units); the full sample is one row
Outcomes = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Statistic:
    """One metric as a function of outcome arrays.

    Attributes:
        key: registry key (``stereoset-official/ss``, ``crows/metric`` …).
        metric: the metric name results carry (a key of :data:`~stereoset_eval.analysis.results.IDEAL`).
        ideal: the value an unbiased, perfectly fluent model gets.
        strata: the outcome column resampling keeps fixed per position (None: free resampling).
        unit: what one resampled unit is (recorded in every interval).
        fn: samples × units arrays -> one value per sample (NaN: undefined on that sample).
    """

    key: str
    metric: str
    ideal: float
    strata: str | None
    unit: str
    fn: Callable[[Outcomes], np.ndarray]

    def value(self, outcomes: Outcomes) -> float:
        """The statistic of the full sample (1-D columns): the point value a report prints."""
        return float(self.fn(as_samples(outcomes))[0])


STATISTICS: Registry[Statistic] = Registry("statistic")


def register(statistic: Statistic) -> Statistic:
    """Add ``statistic`` to :data:`STATISTICS` (a key may be registered once)."""
    return STATISTICS.add(statistic.key, statistic)


def get_statistic(key: str) -> Statistic:
    """The registered statistic ``key``; the error lists the known ones."""
    return STATISTICS[key]


def as_samples(outcomes: Outcomes) -> dict[str, np.ndarray]:
    """1-D columns (one sample) as 1-row 2-D columns; 2-D columns unchanged."""
    return {k: (v[None, :] if v.ndim == 1 else v) for k, v in outcomes.items()}


def take(outcomes: Outcomes, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The resampled columns: ``idx`` is samples × units positions into the 1-D columns."""
    return {k: v[idx] for k, v in outcomes.items()}


def first_appearance_codes(labels: list) -> np.ndarray:
    """Integer codes numbering ``labels`` in order of first appearance (``['b', 'a', 'b']`` -> 0, 1, 0)."""
    code: dict = {}
    return np.array([code.setdefault(lab, len(code)) for lab in labels], dtype=np.int64)


def per_code_sums(codes: np.ndarray, weights: np.ndarray | None, n_codes: int) -> np.ndarray:
    """Per row, the sum of ``weights`` (or the count) of each code: samples × n_codes."""
    rows = codes.shape[0]
    flat = (codes + np.arange(rows, dtype=np.int64)[:, None] * n_codes).ravel()
    w = None if weights is None else np.asarray(weights, dtype=float).ravel()
    return np.bincount(flat, weights=w, minlength=rows * n_codes).reshape(rows, n_codes)


def row_mean_over_present(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Mean of each row over the present columns (``np.mean`` of the row when all are present)."""
    if present.all():
        return values.mean(axis=1)
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.where(present, values, np.nan), axis=1)


def sequential_row_sum(values: np.ndarray) -> np.ndarray:
    """Row sums added column by column, left to right (Python ``sum``'s order, for bit-level agreement)."""
    acc = np.zeros(values.shape[0])
    for j in range(values.shape[1]):
        acc = acc + values[:, j]
    return acc
