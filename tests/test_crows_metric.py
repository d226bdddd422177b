"""CrowS-Pairs metric as metric.py reports it: hand-computed cases and the G1 golden summary."""

from __future__ import annotations

import pytest

from stereoset_eval.analysis.crows_metric import crows_metric, pair_outcomes
from stereoset_eval.analysis.errors import EmptyScopeError, ItemShapeError, MissingScoresError
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item
from conftest import load_golden


def toy(*rows, bias="gender"):
    """rows: (id, direction, more, less) -> items, scores."""
    items, scores = [], {}
    for item_id, direction, more, less in rows:
        items.append(pair_item(item_id, direction=direction, bias_type=bias))
        scores.update(pair_scores(item_id, more, less))
    return items, scores


@pytest.mark.parametrize(
    "direction, more, less, ndigits, hit, neutral",
    [
        ("stereo", -10.0, -12.0, 3, True, False),
        ("stereo", -12.0, -10.0, 3, False, False),
        # antistereo rows: metric.py's sent1 is sent_less and the hit is sent2 (= sent_more) > sent1
        ("antistereo", -10.0, -12.0, 3, True, False),
        ("antistereo", -12.0, -10.0, 3, False, False),
        ("stereo", -5.0001, -5.0004, 3, False, True),  # equal after round(., 3)
        ("stereo", -5.0001, -5.0004, None, True, False),  # unrounded: sent_more higher
        ("stereo", -5.0004, -5.0006, 3, True, False),  # -5.0 vs -5.001
        ("antistereo", -3.0, -3.0, None, False, True),
    ],
)
def test_pair_outcome_table(direction, more, less, ndigits, hit, neutral):
    items, scores = toy(("p", direction, more, less))
    (o,) = pair_outcomes(items, scores, ndigits=ndigits)
    assert (o.hit, o.neutral) == (hit, neutral)


def test_hand_computed_summary_with_neutral_in_denominator():
    items, scores = toy(
        ("s1", "stereo", -1.0, -2.0),  # hit
        ("s2", "stereo", -3.0, -2.0),  # miss
        ("s3", "stereo", -4.0, -4.0),  # neutral
        ("a1", "antistereo", -1.0, -5.0),  # hit
    )
    r = crows_metric(items, scores)
    assert r.metric.value == pytest.approx(50.0)  # 2 hits / 4 pairs (neutral counts in N)
    assert r.stereotype.value == pytest.approx(50.0)  # 1 / 2 non-neutral stereo
    assert r.antistereotype.value == pytest.approx(100.0)
    assert (r.neutral, r.neutral_percent, r.n_pairs) == (1, 25.0, 4)
    assert r.stereotype.n == 2 and r.antistereotype.n == 1
    assert r.metric.ideal == 50.0 and r.options["ndigits"] == 3


def test_per_bias_type_counts_neutral_as_zero():
    items_a, scores_a = toy(("a1", "stereo", -1, -2), ("a2", "stereo", -2, -2), bias="age")
    items_b, scores_b = toy(("b1", "antistereo", -3, -1), bias="race-color")
    r = crows_metric(items_a + items_b, {**scores_a, **scores_b})
    assert {b: (m.value, m.n) for b, m in r.per_bias_type.items()} == {"age": (50.0, 2), "race-color": (0.0, 1)}


def test_direction_score_undefined_without_pairs():
    items, scores = toy(("s1", "stereo", -1, -2))
    r = crows_metric(items, scores)
    assert r.antistereotype is None and r.summary()["anti_stereotype_score"] is None


def test_errors_empty_missing_wrong_items():
    with pytest.raises(EmptyScopeError):
        crows_metric([], {})
    items, scores = toy(("s1", "stereo", -1, -2))
    del scores["s1:less"]
    with pytest.raises(MissingScoresError, match="s1:less"):
        crows_metric(items, scores)
    with pytest.raises(ItemShapeError):
        crows_metric([stereoset_item("x")], {})


def test_g1_summary_and_per_bias_type(crows_items, golden_dir):
    g1 = load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")
    scores = {}
    for p in g1["pairs"]:
        scores[f"crows:{p['id']}:more"] = p["sent_more_score"]
        scores[f"crows:{p['id']}:less"] = p["sent_less_score"]
    r = crows_metric(crows_items, scores, ndigits=3)
    ref = g1["summary"]
    assert r.n_pairs == ref["N"] == 1508
    assert r.metric.value == ref["metric_score"] == 51.326259946949605
    assert r.stereotype.value == ref["stereotype_score"]
    assert r.antistereotype.value == ref["anti_stereotype_score"]
    assert (r.neutral, r.neutral_percent) == (ref["neutral"], ref["neutral_percent"])
    assert (r.stereotype.n, r.antistereotype.n) == (ref["total_stereo"], ref["total_antistereo"])
    assert (r.stereotype.details["hits"], r.antistereotype.details["hits"]) == (
        ref["stereo_score_count"],
        ref["antistereo_score_count"],
    )
    assert set(r.per_bias_type) == set(g1["per_bias_type"])
    for bias, want in g1["per_bias_type"].items():
        got = r.per_bias_type[bias]
        assert (got.n, got.details["hits"]) == (want["N"], want["score_1_count"]), bias
        assert got.value == pytest.approx(want["metric_score"], abs=1e-9), bias
    printed = g1["summary_printed"]
    assert round(r.metric.value, 2) == printed["Metric score"]
    assert round(r.antistereotype.value, 2) == printed["Anti-stereotype score"]
    # the pair-level scores agree too
    outcomes = {o.item_id: o for o in pair_outcomes(crows_items, scores, ndigits=3)}
    assert all(outcomes[f"crows:{p['id']}"].hit == bool(p["score"]) for p in g1["pairs"])


def test_g1_unrounded_scores_with_rounding_give_the_same_summary(crows_items, golden_dir):
    g1 = load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")
    scores = {}
    for p in g1["pairs"]:
        scores[f"crows:{p['id']}:more"] = p["sent_more_score_unrounded"]
        scores[f"crows:{p['id']}:less"] = p["sent_less_score_unrounded"]
    assert crows_metric(crows_items, scores, ndigits=3).summary()["metric_score"] == g1["summary"]["metric_score"]
    assert crows_metric(crows_items, scores, ndigits=None).neutral == 0  # pair 606 differs by 0.00016
