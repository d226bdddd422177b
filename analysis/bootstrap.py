"""One seeded percentile bootstrap for every registered statistic.

:func:`estimate` takes outcome arrays and statistics
(:mod:`stereoset_eval.analysis.statistics`): it resamples the units within each statistic's
declared strata and evaluates the *same* function on the full sample (the point value) and on
every replicate (the interval), so a value and its interval cannot disagree. The wrappers
below attach the intervals to each benchmark's result objects:

* StereoSet (official and micro): examples are resampled **within their target term**, so
  every target keeps its size and the macro average over targets stays defined.
* CrowS-Pairs metric, stereotype and anti-stereotype scores: pairs are resampled (per bias
  type for the per-bias-type metric).
* Pair ss: pairs are resampled — also where it appears as the unbalanced ss beside a balanced
  one, so one number has one interval; balanced ss: pairs are resampled within their group,
  so the weights stay fixed.

Reproducible: each slice draws from ``numpy.random.default_rng([seed, crc32(slice name)])``,
so adding a slice never changes another slice's interval. ``seed``, ``n_resamples``, the
level and the resampling unit are stored in every :class:`~stereoset_eval.analysis.results.ConfidenceInterval`.
"""

from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass
from typing import Any, Hashable, Iterable, Mapping, Sequence

import numpy as np

from stereoset_eval.analysis import crows_metric as crows
from stereoset_eval.analysis import pair_metrics as pairs
from stereoset_eval.analysis import stereoset_metrics as stereoset
from stereoset_eval.analysis.errors import OptionError
from stereoset_eval.analysis.crows_metric import CrowsResult, crows_metric, pair_outcomes
from stereoset_eval.analysis.pair_metrics import BalancedSS, apply_tie_rule, balanced_ss, comparisons, group_labels, pair_ss
from stereoset_eval.analysis.results import ConfidenceInterval, MetricResult
from stereoset_eval.analysis.statistics import Outcomes, Statistic, take
from stereoset_eval.analysis.stereoset_metrics import (
    OFFICIAL_OPTIONS,
    StereoSetEvaluation,
    evaluate_scopes,
    example_outcomes,
    score_official_scope,
    scope_slices,
)
from stereoset_eval.analysis.stereoset_micro import MICRO_OPTIONS, MICRO_STATISTICS, score_micro_scope
from stereoset_eval.foundation.items import Item

METHOD = "percentile bootstrap"
MAX_INDEX_BYTES = 4 * 1024**3  # one slice's resample index matrix
from stereoset_eval.foundation.limits import MAX_RESAMPLES  # noqa: E402  (x 10k items x 8 bytes = 8 GB)


@dataclass(frozen=True)
class BootstrapConfig:
    """How intervals are computed; recorded next to every interval."""

    n_resamples: int = 1000
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        if not isinstance(self.n_resamples, int) or isinstance(self.n_resamples, bool) or self.n_resamples < 1:
            raise OptionError(f"n_resamples (--bootstrap) must be at least 1, got {self.n_resamples!r}")
        if self.n_resamples > MAX_RESAMPLES:
            raise OptionError(f"n_resamples (--bootstrap) must be at most {MAX_RESAMPLES:,} (the index matrix "
                              f"is resamples x items int64), got {self.n_resamples:,}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise OptionError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not 0.0 < self.level < 1.0:
            raise OptionError(f"level must lie strictly between 0 and 1, got {self.level}")

    def to_dict(self) -> dict[str, Any]:
        return {"method": METHOD, **dataclasses.asdict(self)}


def slice_rng(seed: int, name: str) -> np.random.Generator:
    """The generator of one named slice: independent of every other slice, stable across runs."""
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def resample_within_strata(labels: Sequence[Hashable], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Index matrix (n_resamples × n): column j is drawn with replacement from the positions sharing ``labels[j]``.

    >>> idx = resample_within_strata(["a", "a", "b"], 4, np.random.default_rng(0))
    >>> idx.shape, bool((idx[:, 2] == 2).all()), bool(np.isin(idx[:, :2], [0, 1]).all())
    ((4, 3), True, True)
    """
    n = len(labels)
    if n_resamples * n * 8 > MAX_INDEX_BYTES:  # refuse before allocating, not after all the scoring
        raise OptionError(f"the bootstrap needs a {n_resamples:,} x {n:,} index matrix "
                          f"({n_resamples * n * 8 / 1e9:.1f} GB, limit {MAX_INDEX_BYTES / 1e9:.1f} GB): "
                          "lower --bootstrap (analysis.bootstrap)")
    idx = np.empty((n_resamples, n), dtype=np.int64)
    groups: dict[Hashable, list[int]] = {}
    for j, lab in enumerate(labels):
        groups.setdefault(lab, []).append(j)
    for positions in groups.values():
        pos = np.asarray(positions)
        idx[:, pos] = pos[rng.integers(0, pos.size, size=(n_resamples, pos.size))]
    return idx


def percentile_interval(replicates: np.ndarray, config: BootstrapConfig, unit: str) -> ConfidenceInterval:
    alpha = (1.0 - config.level) / 2.0
    low, high = np.percentile(replicates, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return ConfidenceInterval(
        low=float(low),
        high=float(high),
        level=config.level,
        method=METHOD,
        n_resamples=config.n_resamples,
        seed=config.seed,
        resample_unit=unit,
    )


@dataclass(frozen=True)
class Estimate:
    """A statistic's value on the full sample and its interval from the replicates of the same function."""

    value: float
    ci: ConfidenceInterval | None


def estimate(
    outcomes: Outcomes,
    statistics: Sequence[Statistic],
    *,
    slice_name: str,
    config: BootstrapConfig,
    unit: str | None = None,
) -> dict[str, Estimate]:
    """Point value and percentile interval of each statistic on one sample (keyed by statistic key).

    The statistics share one resampling (one index matrix drawn from the slice's generator), so
    they must declare the same strata. Replicates where a statistic is undefined (NaN, e.g. no
    pair of a direction) are left out; a statistic undefined on every replicate gets no interval.
    """
    strata = {s.strata for s in statistics}
    if len(strata) != 1:
        raise OptionError(f"statistics {[s.key for s in statistics]} declare different strata {sorted(map(str, strata))}")
    (stratum,) = strata
    n = len(next(iter(outcomes.values())))
    labels: Sequence[Hashable] = [0] * n if stratum is None else outcomes[stratum].tolist()
    idx = resample_within_strata(labels, config.n_resamples, slice_rng(config.seed, slice_name))
    sample = take(outcomes, idx)
    out = {}
    for stat in statistics:
        reps = np.asarray(stat.fn(sample), dtype=float)
        reps = reps[np.isfinite(reps)]
        ci = percentile_interval(reps, config, unit or stat.unit) if reps.size else None
        out[stat.key] = Estimate(stat.value(outcomes), ci)
    return out


def _attach(result: MetricResult, est: Estimate) -> MetricResult:
    """``result`` with the estimate's interval; its value must be the statistic's full-sample value."""
    if result.value != est.value:
        raise AssertionError(f"{result.name}: value {result.value!r} is not its statistic's {est.value!r}")
    return result.with_ci(est.ci) if est.ci is not None else result


def stereoset_with_ci(
    items: Iterable[Item], scores: Mapping[str, float], *, variant: str = "official", config: BootstrapConfig
) -> StereoSetEvaluation:
    """:func:`~stereoset_eval.analysis.stereoset_metrics.evaluate_stereoset` (or the micro variant) with a CI on every number."""
    if variant not in ("official", "micro"):
        raise OptionError(f"variant must be 'official' or 'micro', got {variant!r}")
    outcomes = example_outcomes(items, scores)
    scorer, options, statistics = (
        (score_official_scope, OFFICIAL_OPTIONS, stereoset.OFFICIAL_STATISTICS)
        if variant == "official"
        else (score_micro_scope, MICRO_OPTIONS, MICRO_STATISTICS)
    )
    evaluation = evaluate_scopes(outcomes, scorer, variant, options)
    slices = scope_slices(outcomes)
    scopes = {}
    seen: dict[tuple[int, ...], dict[str, Estimate]] = {}
    for name, scope in evaluation.scopes.items():
        same = tuple(map(id, slices[name]))  # one task scored: overall is that task's overall, one interval
        if same not in seen:
            seen[same] = estimate(stereoset.outcome_arrays(slices[name]), statistics,
                                  slice_name=f"stereoset/{variant}/{name}", config=config)
        est = seen[same]
        lms, ss, icat = (est[s.key] for s in statistics)
        scopes[name] = dataclasses.replace(
            scope, lms=_attach(scope.lms, lms), ss=_attach(scope.ss, ss), icat=_attach(scope.icat, icat)
        )
    return StereoSetEvaluation(
        variant=variant, scopes=scopes, options={**evaluation.options, "bootstrap": config.to_dict()}
    )


def crows_with_ci(
    items: Iterable[Item], scores: Mapping[str, float], *, ndigits: int | None = 3, config: BootstrapConfig
) -> CrowsResult:
    """:func:`~stereoset_eval.analysis.crows_metric.crows_metric` with CIs on the metric, both direction scores and each bias type."""
    items = list(items)
    result = crows_metric(items, scores, ndigits=ndigits)
    outcomes = pair_outcomes(items, scores, ndigits=ndigits)
    stats = (crows.CROWS_METRIC, crows.CROWS_STEREOTYPE, crows.CROWS_ANTISTEREOTYPE)
    est = estimate(crows.outcome_arrays(outcomes), stats, slice_name="crows/all", config=config)

    def direction(res: MetricResult | None, stat: Statistic) -> MetricResult | None:
        return None if res is None else _attach(res, est[stat.key])

    per_bias = {}
    for b, res in result.per_bias_type.items():
        arrays = crows.outcome_arrays([o for o in outcomes if o.bias_type == b])
        bias_est = estimate(arrays, (crows.CROWS_METRIC,), slice_name=f"crows/{b}", config=config)
        per_bias[b] = _attach(res, bias_est[crows.CROWS_METRIC.key])
    return dataclasses.replace(
        result,
        metric=_attach(result.metric, est[crows.CROWS_METRIC.key]),
        stereotype=direction(result.stereotype, crows.CROWS_STEREOTYPE),
        antistereotype=direction(result.antistereotype, crows.CROWS_ANTISTEREOTYPE),
        per_bias_type=per_bias,
        options={**result.options, "bootstrap": config.to_dict()},
    )


def _pair_ss_estimate(prefs: Sequence[float | None], config: BootstrapConfig) -> Estimate:
    est = estimate(pairs.outcome_arrays(prefs), (pairs.PAIR_SS,), slice_name="pair_ss", config=config)
    return est[pairs.PAIR_SS.key]


def pair_ss_with_ci(
    items: Iterable[Item], scores: Mapping[str, float], *, ties: str = "anti", config: BootstrapConfig
) -> MetricResult:
    """:func:`~stereoset_eval.analysis.pair_metrics.pair_ss` with a CI (pairs resampled; excluded ties stay excluded)."""
    items = list(items)
    result = pair_ss(items, scores, ties=ties)
    prefs = apply_tie_rule(comparisons(items, scores), ties=ties)
    return _attach(result, _pair_ss_estimate(prefs, config))


def balanced_ss_with_ci(
    items: Iterable[Item],
    scores: Mapping[str, float],
    *,
    group_by: str = "dimension",
    ties: str = "anti",
    missing_group: str = "error",
    config: BootstrapConfig,
) -> BalancedSS:
    """:func:`~stereoset_eval.analysis.pair_metrics.balanced_ss` with CIs on both values and on each group's ss.

    The unbalanced value is the pair ss and gets the pair ss interval (pairs resampled); the
    balanced value resamples pairs within their groups; each group's ss (the per-dimension ss)
    resamples that group's pairs (slice ``balanced_ss/<group_by>/<group>``).
    """
    result = balanced_ss(items, scores, group_by=group_by, ties=ties, missing_group=missing_group)
    items, _ = pairs.drop_untagged(list(items), group_by, missing_group)  # the items balanced_ss counted
    labels = group_labels(items, group_by, missing_group=missing_group)
    prefs = apply_tie_rule(comparisons(items, scores), ties=ties)
    balanced = estimate(
        pairs.outcome_arrays(prefs, labels),
        (pairs.BALANCED_SS,),
        slice_name=f"balanced_ss/{group_by}",
        config=config,
        unit=f"pairs within {group_by} groups",
    )[pairs.BALANCED_SS.key]
    groups = {}
    for g, stat in result.groups.items():
        kept = [p for lab, p in zip(labels, prefs) if lab == g]
        est = estimate(pairs.outcome_arrays(kept), (pairs.PAIR_SS,), slice_name=f"balanced_ss/{group_by}/{g}",
                       config=config, unit=f"pairs of the {group_by} group")[pairs.PAIR_SS.key]
        if est.value != stat.ss:
            raise AssertionError(f"group {g}: ss {stat.ss!r} is not its statistic's {est.value!r}")
        groups[g] = dataclasses.replace(stat, ci=est.ci)
    return dataclasses.replace(
        result,
        groups=groups,
        unbalanced=_attach(result.unbalanced, _pair_ss_estimate(prefs, config)),
        balanced=_attach(result.balanced, balanced),
        options={**result.options, "bootstrap": config.to_dict()},
    )
