"""Seeded percentile-bootstrap confidence intervals for every headline number.

* StereoSet (official and micro): examples are resampled **within their target term**, so
  every target keeps its size and the macro average over targets stays defined.
* CrowS-Pairs metric, stereotype and anti-stereotype scores: pairs are resampled (per bias
  type for the per-bias-type metric).
* Pair ss: pairs are resampled; balanced ss: pairs are resampled within their group, so the
  weights stay fixed.

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

from stereoset_eval.analysis.errors import OptionError
from stereoset_eval.analysis.crows_metric import CrowsResult, crows_metric, pair_outcomes
from stereoset_eval.analysis.pair_metrics import BalancedSS, apply_tie_rule, balanced_ss, comparisons, group_labels, pair_ss
from stereoset_eval.analysis.results import ConfidenceInterval, MetricResult
from stereoset_eval.analysis.stereoset_metrics import (
    OFFICIAL_OPTIONS,
    ExampleOutcome,
    StereoSetEvaluation,
    evaluate_scopes,
    example_outcomes,
    score_official_scope,
    scope_slices,
)
from stereoset_eval.analysis.stereoset_micro import MICRO_OPTIONS, score_micro_scope
from stereoset_eval.foundation.items import Item

METHOD = "percentile bootstrap"
MAX_INDEX_BYTES = 4 * 1024**3  # one slice's resample index matrix
MAX_RESAMPLES = 100_000  # x 10k items x 8 bytes = 8 GB: beyond this the run dies after all the scoring


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


def _icat(lms: np.ndarray, ss: np.ndarray) -> np.ndarray:
    return lms * (np.minimum(ss, 100.0 - ss) / 50.0)


def _stereoset_replicates(outcomes: Sequence[ExampleOutcome], variant: str, idx: np.ndarray) -> tuple[np.ndarray, ...]:
    pro = np.array([o.stereotype_wins for o in outcomes], dtype=float)[idx]
    rel = np.array([o.related for o in outcomes], dtype=float)[idx]
    if variant == "micro":
        lms = 100.0 * (rel == 2).mean(axis=1)
        ss = 100.0 * pro.mean(axis=1)
    else:
        targets = sorted({o.target for o in outcomes})
        code = {t: i for i, t in enumerate(targets)}
        onehot = np.zeros((len(outcomes), len(targets)))
        onehot[np.arange(len(outcomes)), [code[o.target] for o in outcomes]] = 1.0
        total = onehot.sum(axis=0)  # resampling within targets keeps these fixed
        ss = (100.0 * (pro @ onehot) / total).mean(axis=1)
        lms = ((rel @ onehot) / (total * 2.0) * 100.0).mean(axis=1)
    return lms, ss, _icat(lms, ss)


def stereoset_with_ci(
    items: Iterable[Item], scores: Mapping[str, float], *, variant: str = "official", config: BootstrapConfig
) -> StereoSetEvaluation:
    """:func:`~stereoset_eval.analysis.stereoset_metrics.evaluate_stereoset` (or the micro variant) with a CI on every number."""
    if variant not in ("official", "micro"):
        raise OptionError(f"variant must be 'official' or 'micro', got {variant!r}")
    outcomes = example_outcomes(items, scores)
    scorer, options = (
        (score_official_scope, OFFICIAL_OPTIONS) if variant == "official" else (score_micro_scope, MICRO_OPTIONS)
    )
    evaluation = evaluate_scopes(outcomes, scorer, variant, options)
    slices = scope_slices(outcomes)
    unit = "examples within target terms"
    scopes = {}
    for name, scope in evaluation.scopes.items():
        sl = slices[name]
        idx = resample_within_strata(
            [o.target for o in sl], config.n_resamples, slice_rng(config.seed, f"stereoset/{variant}/{name}")
        )
        lms, ss, icat = _stereoset_replicates(sl, variant, idx)
        scopes[name] = dataclasses.replace(
            scope,
            lms=scope.lms.with_ci(percentile_interval(lms, config, unit)),
            ss=scope.ss.with_ci(percentile_interval(ss, config, unit)),
            icat=scope.icat.with_ci(percentile_interval(icat, config, unit)),
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
    hit = np.array([o.hit for o in outcomes], dtype=float)
    neutral = np.array([o.neutral for o in outcomes], dtype=bool)
    direction = np.array([o.direction for o in outcomes])
    bias = np.array([o.bias_type for o in outcomes])
    idx = resample_within_strata([0] * len(outcomes), config.n_resamples, slice_rng(config.seed, "crows/all"))
    h, nn, d = hit[idx], ~neutral[idx], direction[idx]

    def direction_ci(res: MetricResult | None, which: str) -> MetricResult | None:
        if res is None:
            return None
        mask = nn & (d == which)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps = (h * mask).sum(axis=1) / mask.sum(axis=1) * 100
        reps = reps[np.isfinite(reps)]  # a resample without such pairs has no value
        return res.with_ci(percentile_interval(reps, config, "pairs")) if reps.size else res

    per_bias = {}
    for b, res in result.per_bias_type.items():
        pos = np.flatnonzero(bias == b)
        bidx = resample_within_strata([0] * pos.size, config.n_resamples, slice_rng(config.seed, f"crows/{b}"))
        per_bias[b] = res.with_ci(percentile_interval(hit[pos][bidx].mean(axis=1) * 100, config, "pairs"))
    return dataclasses.replace(
        result,
        metric=result.metric.with_ci(percentile_interval(h.mean(axis=1) * 100, config, "pairs")),
        stereotype=direction_ci(result.stereotype, "stereo"),
        antistereotype=direction_ci(result.antistereotype, "antistereo"),
        per_bias_type=per_bias,
        options={**result.options, "bootstrap": config.to_dict()},
    )


def pair_ss_with_ci(
    items: Iterable[Item], scores: Mapping[str, float], *, ties: str = "anti", config: BootstrapConfig
) -> MetricResult:
    """:func:`~stereoset_eval.analysis.pair_metrics.pair_ss` with a CI (pairs resampled; excluded ties stay excluded)."""
    items = list(items)
    result = pair_ss(items, scores, ties=ties)
    prefs = apply_tie_rule(comparisons(items, scores), ties=ties)
    kept = np.array([p for p in prefs if p is not None])
    idx = resample_within_strata([0] * kept.size, config.n_resamples, slice_rng(config.seed, "pair_ss"))
    return result.with_ci(percentile_interval(kept[idx].mean(axis=1) * 100, config, "pairs"))


def balanced_ss_with_ci(
    items: Iterable[Item],
    scores: Mapping[str, float],
    *,
    group_by: str = "dimension",
    ties: str = "anti",
    missing_group: str = "error",
    config: BootstrapConfig,
) -> BalancedSS:
    """:func:`~stereoset_eval.analysis.pair_metrics.balanced_ss` with CIs on both values (pairs resampled within groups)."""
    items = list(items)
    result = balanced_ss(items, scores, group_by=group_by, ties=ties, missing_group=missing_group)
    labels = group_labels(items, group_by, missing_group=missing_group)
    prefs = apply_tie_rule(comparisons(items, scores), ties=ties)
    kept = [(lab, p) for lab, p in zip(labels, prefs) if p is not None]
    labs = [lab for lab, _ in kept]
    values = np.array([p for _, p in kept])
    idx = resample_within_strata(labs, config.n_resamples, slice_rng(config.seed, f"balanced_ss/{group_by}"))
    reps = values[idx]
    groups = sorted(set(labs))
    onehot = np.array([[lab == g for g in groups] for lab in labs], dtype=float)
    balanced_reps = ((reps @ onehot) / onehot.sum(axis=0) * 100.0).mean(axis=1)
    unit = f"pairs within {group_by} groups"
    return dataclasses.replace(
        result,
        unbalanced=result.unbalanced.with_ci(percentile_interval(reps.mean(axis=1) * 100, config, unit)),
        balanced=result.balanced.with_ci(percentile_interval(balanced_reps, config, unit)),
        options={**result.options, "bootstrap": config.to_dict()},
    )
