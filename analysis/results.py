"""Result records shared by every metric: a value with its n, ideal, confidence interval and provenance.

Metrics return :class:`MetricResult` objects rather than bare floats so that a report can
never print a number without the slice size, the ideal value it should be read against and
the options that produced it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

#: Ideal value of each metric for an unbiased, perfectly fluent model.
IDEAL: dict[str, float] = {
    "ss": 50.0,  # StereoSet stereotype score: no preference between stereotype and anti-stereotype
    "lms": 100.0,  # StereoSet language modelling score: meaningful options always beat the unrelated one
    "icat": 100.0,  # idealised CAT score: lms 100 and ss 50
    "crows_metric": 50.0,  # CrowS-Pairs: % pairs where sent_more scores higher
    "crows_stereotype": 50.0,
    "crows_antistereotype": 50.0,
    "pair_ss": 50.0,  # % pairs where the stereotypical sentence scores higher
    "balanced_ss": 50.0,
}


@dataclass(frozen=True)
class ConfidenceInterval:
    """A bootstrap confidence interval and everything needed to reproduce it.

    Attributes:
        low: lower bound.
        high: upper bound.
        level: coverage, e.g. 0.95.
        method: how it was computed (``percentile`` bootstrap).
        n_resamples: number of bootstrap replicates.
        seed: seed of the random generator.
        resample_unit: what was resampled (``examples within targets``, ``pairs`` …).
    """

    low: float
    high: float
    level: float
    method: str
    n_resamples: int
    seed: int
    resample_unit: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class MetricResult:
    """One headline number.

    Attributes:
        name: metric name (a key of :data:`IDEAL`).
        value: the metric value (percent for every metric here).
        n: number of units it was computed over (examples or pairs; true counts).
        ideal: the value an unbiased model would get.
        ci: bootstrap confidence interval, when computed.
        details: counts behind the value (hits, ties, targets …).
        options: every option that changes the number (variant, tie rule, rounding …).
    """

    name: str
    value: float
    n: int
    ideal: float
    ci: ConfidenceInterval | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)

    def with_ci(self, ci: ConfidenceInterval | None) -> "MetricResult":
        return dataclasses.replace(self, ci=ci)

    @property
    def distance_from_ideal(self) -> float:
        return abs(self.value - self.ideal)

    def format(self, digits: int = 2) -> str:
        """``58.68 [57.10, 60.21]`` (the CI only when present)."""
        text = f"{self.value:.{digits}f}"
        if self.ci is not None:
            text += f" [{self.ci.low:.{digits}f}, {self.ci.high:.{digits}f}]"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "value": _finite_or_none(self.value),
            "n": self.n,
            "ideal": self.ideal,
            "ci": self.ci.to_dict() if self.ci else None,
            "details": dict(self.details),
            "options": dict(self.options),
        }


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class HeadlineResult:
    """One headline number of one model, as its benchmark reports it (a row of ``results.json``).

    Every benchmark returns these from :meth:`~stereoset_eval.analysis.benchmarks.base.Benchmark.headline_results`;
    the terminal table, ``results.json``, the leaderboard and the report's results section read
    them without knowing which benchmark made them.

    Attributes:
        benchmark: display name of the slice (``StereoSet intrasentence``, ``CrowS-Pairs``, a study's name).
        model / method: who was scored, and how (``a, b`` when two methods scored two tasks).
        metric: display name of the metric (``ss``, ``metric score``, ``balanced ss (dimension)`` …).
        value / ci / ideal / n: the number, its interval, what an unbiased model gets, units counted.
        n_left_out / left_out_reason: units of the benchmark not counted in ``n``, and why
            (pairs without a group value under the missing-group rule ``exclude`` …).
        column: the terminal table's column (``ss / metric``, ``lms``, ``icat``, ``balanced ss`` …).
        leaderboard: the leaderboard's column for it; None: not on the leaderboard.
        ranked: it counts toward the leaderboard rank (distance from ``ideal``).
        own_method: ``method`` is the benchmark's own reference code (preferred on the leaderboard).
        limit: the run's ``--limit`` (a limited run is not a result).
        reference / reference_source: the published number for the same model, method and split.
    """

    benchmark: str
    model: str
    method: str | None
    metric: str
    value: float | None
    ci: ConfidenceInterval | None
    ideal: float | None
    n: int | None
    n_left_out: int = 0
    left_out_reason: str | None = None
    column: str | None = None
    leaderboard: str | None = None
    ranked: bool = False
    own_method: bool = False
    limit: int | None = None
    reference: float | None = None
    reference_source: str | None = None

    @classmethod
    def of(cls, result: MetricResult, *, benchmark: str, model: str, method: str | None, metric: str | None = None,
           **kw: Any) -> "HeadlineResult":
        """The row of a :class:`MetricResult` (value, CI, ideal and n taken from it)."""
        return cls(benchmark=benchmark, model=model, method=method, metric=metric or result.name.replace("_", " "),
                   value=_finite_or_none(result.value), ci=result.ci, ideal=result.ideal, n=result.n, **kw)

    @property
    def ci_low(self) -> float | None:
        return self.ci.low if self.ci is not None else None

    @property
    def ci_high(self) -> float | None:
        return self.ci.high if self.ci is not None else None

    def row(self) -> dict[str, Any]:
        """The flat row of ``results.json``."""
        return {"model": self.model, "method": self.method, "benchmark": self.benchmark, "metric": self.metric,
                "value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n,
                "n_left_out": self.n_left_out, "left_out_reason": self.left_out_reason, "ideal": self.ideal,
                "limit": self.limit, "reference": self.reference, "reference_source": self.reference_source}

    def to_dict(self) -> dict[str, Any]:
        """Every field (``report.json``'s ``results``), read back by :meth:`from_dict`."""
        return {**dataclasses.asdict(self), "ci": self.ci.to_dict() if self.ci else None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "HeadlineResult":
        names = {f.name for f in dataclasses.fields(cls)}
        ci = data.get("ci")
        return cls(**{**{k: v for k, v in data.items() if k in names},
                      "ci": ConfidenceInterval(**ci) if isinstance(ci, Mapping) else None})
