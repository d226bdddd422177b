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
