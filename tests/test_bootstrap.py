"""Bootstrap intervals: seeded, reproducible, recorded, stratified as documented."""

from __future__ import annotations

import numpy as np
import pytest

from stereoset_eval.analysis.bootstrap import (
    BootstrapConfig,
    balanced_ss_with_ci,
    crows_with_ci,
    pair_ss_with_ci,
    resample_within_strata,
    stereoset_with_ci,
)
from stereoset_eval.analysis.stereoset_metrics import evaluate_stereoset
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item, stereoset_scores

CFG = BootstrapConfig(n_resamples=300, seed=11, level=0.9)


def stereoset_toy(n=40):
    rng = np.random.default_rng(0)
    items, scores = [], {}
    for i in range(n):
        iid = f"e{i}"
        items.append(
            stereoset_item(
                iid,
                target=f"t{i % 5}",
                bias_type=["gender", "race"][i % 2],
                task=["intrasentence", "intersentence"][(i // 2) % 2],
            )
        )
        scores.update(stereoset_scores(iid, *rng.random(3)))
    items.append(stereoset_item("single", target="lonely", bias_type="religion"))
    scores.update(stereoset_scores("single", 0.9, 0.1, 0.5))
    return items, scores


def test_resampling_stays_within_strata():
    labels = ["a", "b", "a", "c", "b", "a"]
    idx = resample_within_strata(labels, 50, np.random.default_rng(1))
    lab = np.array(labels)
    assert (lab[idx] == lab[None, :]).all()
    assert (idx[:, 3] == 3).all()  # a stratum of one keeps its only member


def test_stereoset_cis_are_reproducible_and_recorded():
    items, scores = stereoset_toy()
    a = stereoset_with_ci(items, scores, config=CFG)
    b = stereoset_with_ci(items, scores, config=CFG)
    point = evaluate_stereoset(items, scores)
    for name, scope in a.scopes.items():
        assert scope.ss.value == point[name].ss.value  # the point estimate is the official one
        for m, m2 in zip(scope.metrics, b[name].metrics):
            assert m.ci == m2.ci and m.ci.low <= m.ci.high
            assert (m.ci.seed, m.ci.n_resamples, m.ci.level) == (11, 300, 0.9)
            assert m.ci.resample_unit == "examples within target terms"
    other = stereoset_with_ci(items, scores, config=BootstrapConfig(300, 12, 0.9))
    assert other["overall"].ss.ci != a["overall"].ss.ci
    # one example in one target: every resample is that example
    lonely = a["intrasentence/religion"]
    assert lonely.ss.ci.low == lonely.ss.ci.high == 100.0
    assert a.options["bootstrap"]["seed"] == 11


def test_stereoset_micro_cis():
    items, scores = stereoset_toy()
    micro = stereoset_with_ci(items, scores, variant="micro", config=CFG)
    assert micro.variant == "micro" and micro["overall"].lms.ci is not None
    with pytest.raises(ValueError):
        stereoset_with_ci(items, scores, variant="macro", config=CFG)


def test_interval_covers_point_for_a_large_sample():
    items, scores = stereoset_toy(400)
    ev = stereoset_with_ci(items, scores, config=BootstrapConfig(500, 0, 0.95))
    for m in ev["overall"].metrics:
        assert m.ci.low <= m.value <= m.ci.high


def test_crows_and_pair_cis():
    items, scores = [], {}
    for i in range(60):
        items.append(
            pair_item(
                f"p{i}",
                direction="stereo" if i % 3 else "antistereo",
                bias_type="age" if i < 30 else "gender",
                dimension="X" if i % 4 else "Y",
            )
        )
        scores.update(pair_scores(f"p{i}", -float(i % 7), -float(i % 5)))
    crows = crows_with_ci(items, scores, config=CFG)
    assert crows.metric.ci.low <= crows.metric.value <= crows.metric.ci.high
    assert crows.stereotype.ci is not None and crows.antistereotype.ci is not None
    assert all(r.ci is not None for r in crows.per_bias_type.values())
    assert crows_with_ci(items, scores, config=CFG).metric.ci == crows.metric.ci
    pss = pair_ss_with_ci(items, scores, ties="exclude", config=CFG)
    assert pss.ci.resample_unit == "pairs"
    bal = balanced_ss_with_ci(items, scores, config=CFG)
    assert bal.balanced.ci.low <= bal.balanced.ci.high and "dimension" in bal.balanced.ci.resample_unit


@pytest.mark.parametrize("kw", [{"n_resamples": 0}, {"level": 1.0}, {"level": 0.0}])
def test_config_validation(kw):
    with pytest.raises(ValueError):
        BootstrapConfig(**kw)


def test_one_task_overall_has_the_interval_of_that_task():
    """With intrasentence only, 'overall' is the same number as 'intrasentence/overall': one interval for both."""
    from stereoset_eval.analysis.bootstrap import BootstrapConfig, stereoset_with_ci
    from stereoset_eval.analysis.toy_items import stereoset_item, stereoset_scores

    items, scores = [], {}
    for k in range(12):
        it = stereoset_item(f"e{k}", target=f"t{k % 4}", bias_type="race" if k % 2 else "gender")
        items.append(it)
        scores.update(stereoset_scores(f"e{k}", -float(k % 3), -1.0, -2.5 + (k % 2)))
    ev = stereoset_with_ci(items, scores, config=BootstrapConfig(n_resamples=200, seed=3))
    a, b = ev.scopes["intrasentence/overall"], ev.scopes["overall"]
    for metric in ("lms", "ss", "icat"):
        assert getattr(a, metric).value == getattr(b, metric).value
        assert getattr(a, metric).ci == getattr(b, metric).ci, metric
