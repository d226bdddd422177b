"""Metrics are registered statistics: the printed value is the statistic of the full sample, and
the same function makes its bootstrap interval, so one number never gets two intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from stereoset_eval.analysis import crows_metric, pair_metrics, stereoset_metrics
from stereoset_eval.analysis.bootstrap import (
    BootstrapConfig,
    balanced_ss_with_ci,
    crows_with_ci,
    estimate,
    pair_ss_with_ci,
    stereoset_with_ci,
)
from stereoset_eval.analysis.report_build import ModelResults, build_report
from stereoset_eval.analysis.statistics import STATISTICS, get_statistic
from stereoset_eval.analysis.stereoset_micro import MICRO_STATISTICS
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item, stereoset_scores
from stereoset_eval.foundation.errors import UnknownNameError

CFG = BootstrapConfig(n_resamples=200, seed=5, level=0.9)


def _stereoset_toy(n=60):
    rng = np.random.default_rng(1)
    items, scores = [], {}
    for i in range(n):
        items.append(stereoset_item(f"e{i}", target=f"t{i % 7}", bias_type=["gender", "race", "religion"][i % 3],
                                    task=["intrasentence", "intersentence"][(i // 3) % 2]))
        scores.update(stereoset_scores(f"e{i}", *rng.random(3)))
    return items, scores


def _pairs_toy(n=80):
    rng = np.random.default_rng(2)
    items, scores = [], {}
    for i in range(n):
        items.append(pair_item(f"p{i}", direction="stereo" if i % 3 else "antistereo",
                               bias_type=["age", "gender", "race"][i % 3], dimension="XYZ"[i % 5 % 3]))
        scores.update(pair_scores(f"p{i}", *np.round(rng.normal(size=2), 1)))
    return items, scores


def test_every_reported_value_is_its_statistic_on_the_full_sample():
    items, scores = _stereoset_toy()
    seen = set()
    for variant, stats in (("official", stereoset_metrics.OFFICIAL_STATISTICS), ("micro", MICRO_STATISTICS)):
        ev = stereoset_with_ci(items, scores, variant=variant, config=CFG)
        slices = stereoset_metrics.scope_slices(stereoset_metrics.example_outcomes(items, scores))
        for name, scope in ev.scopes.items():
            arrays = stereoset_metrics.outcome_arrays(slices[name])
            for stat, m in zip(stats, scope.metrics):
                assert m.value == stat.value(arrays) and m.name == stat.metric and m.ideal == stat.ideal
                assert m.ci is not None
                seen.add(stat.key)
    pairs, pscores = _pairs_toy()
    cr = crows_with_ci(pairs, pscores, ndigits=1, config=CFG)
    arrays = crows_metric.outcome_arrays(crows_metric.pair_outcomes(pairs, pscores, ndigits=1))
    for res, stat in ((cr.metric, crows_metric.CROWS_METRIC), (cr.stereotype, crows_metric.CROWS_STEREOTYPE),
                      (cr.antistereotype, crows_metric.CROWS_ANTISTEREOTYPE)):
        assert res.value == stat.value(arrays) and res.ci is not None
        seen.add(stat.key)
    for ties in ("anti", "half", "exclude"):
        prefs = pair_metrics.apply_tie_rule(pair_metrics.comparisons(pairs, pscores), ties=ties)
        labels = pair_metrics.group_labels(pairs, "dimension")
        pss = pair_ss_with_ci(pairs, pscores, ties=ties, config=CFG)
        bal = balanced_ss_with_ci(pairs, pscores, ties=ties, config=CFG)
        assert pss.value == pair_metrics.PAIR_SS.value(pair_metrics.outcome_arrays(prefs)) == bal.unbalanced.value
        assert bal.balanced.value == pair_metrics.BALANCED_SS.value(pair_metrics.outcome_arrays(prefs, labels))
        seen.update({pair_metrics.PAIR_SS.key, pair_metrics.BALANCED_SS.key})
    builtin = {k for k in STATISTICS if k.split("/")[0] in ("stereoset-official", "stereoset-micro", "crows", "pairs")}
    assert builtin <= seen  # every built-in statistic was checked


def test_the_vectorised_statistic_equals_its_one_row_value_on_every_replicate():
    """A replicate's value is the same function on that resample as a 1-D sample (no second formula)."""
    items, scores = _stereoset_toy()
    arrays = stereoset_metrics.outcome_arrays(stereoset_metrics.example_outcomes(items, scores))
    idx = np.random.default_rng(0).integers(0, len(arrays["pro"]), size=(20, len(arrays["pro"])))
    for stat in stereoset_metrics.OFFICIAL_STATISTICS + MICRO_STATISTICS:
        reps = stat.fn({k: v[idx] for k, v in arrays.items()})
        assert [stat.value({k: v[row] for k, v in arrays.items()}) for row in idx] == reps.tolist()


def _metric_dicts(node, out, scope=None):
    """(enclosing StereoSet scope or None, metric dict) of every metric in a report document."""
    if isinstance(node, dict):
        scope = node.get("scope", scope) if isinstance(node.get("scope"), str) else scope
        if {"name", "value", "n", "ci", "options"} <= set(node):
            out.append((scope, node))
        for v in node.values():
            _metric_dicts(v, out, scope)
    elif isinstance(node, list):
        for v in node:
            _metric_dicts(v, out, scope)
    return out


def test_one_number_never_gets_two_intervals_in_a_report():
    items, scores = _stereoset_toy()
    pairs, pscores = _pairs_toy()
    from stereoset_eval.analysis.benchmarks import EvaluationOptions, get_benchmark

    toy_pairs = get_benchmark("pairs").evaluate(pairs, pscores, EvaluationOptions(bootstrap=CFG), title="toy pairs")
    results = ModelResults(model="toy", evaluations=(
        get_benchmark("stereoset").evaluate(items, scores, EvaluationOptions(bootstrap=CFG, micro=True)),
        get_benchmark("crows-pairs").evaluate(pairs, pscores, EvaluationOptions(bootstrap=CFG)),
        toy_pairs,
    ))
    doc = build_report(results, {"timestamp": "fixed"}).to_dict()
    metrics = _metric_dicts(doc, [])
    assert len(metrics) > 40
    intervals: dict[str, set] = {}
    for scope, m in metrics:
        opts = {k: v for k, v in m["options"].items() if k not in ("bootstrap", "group_by", "missing_group", "weight")}
        # the same statistic of the same sample: same name, options, size, value and counts
        key = json.dumps([scope, m["name"], m["n"], m["value"], opts, m["details"]], sort_keys=True, default=str)
        intervals.setdefault(key, set()).add(json.dumps(m["ci"], sort_keys=True))
    twice = {k: v for k, v in intervals.items() if len(v) > 1}
    assert not twice, twice
    # the case a newcomer met: the unbalanced ss beside the balanced one is the pair ss, with its interval
    assert toy_pairs.balanced is not None and toy_pairs.balanced.unbalanced.ci == toy_pairs.parts["pair_ss"].ci


def test_statistics_sharing_a_resample_must_share_strata():
    with pytest.raises(ValueError, match="different strata"):
        estimate({"pref": np.ones(3), "group": np.zeros(3, dtype=int)},
                 (pair_metrics.PAIR_SS, pair_metrics.BALANCED_SS), slice_name="x", config=CFG)


def test_unknown_statistic_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match="crows/metric"):
        get_statistic("crows/metrik")
