"""Pair ss and balanced ss: tie rules, unequal groups, group attribute, missing groups."""

from __future__ import annotations

import pytest

from stereoset_eval.analysis.errors import EmptyScopeError, ItemShapeError
from stereoset_eval.analysis.pair_metrics import balanced_ss, pair_ss
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item, stereoset_scores
from stereoset_eval.foundation.errors import UnknownNameError


def pairs(*rows):
    """rows: (id, dimension, more, less)."""
    items, scores = [], {}
    for item_id, dim, more, less in rows:
        items.append(pair_item(item_id, dimension=dim, source="curated"))
        scores.update(pair_scores(item_id, more, less))
    return items, scores


# 2 stereotypical-higher, 1 lower, 1 tie
ROWS = (("a", "X", -1, -2), ("b", "X", -1, -3), ("c", "Y", -4, -2), ("d", "Y", -5, -5))


@pytest.mark.parametrize("ties, value, n", [("anti", 50.0, 4), ("half", 62.5, 4), ("exclude", 200 / 3, 3)])
def test_pair_ss_tie_rules(ties, value, n):
    items, scores = pairs(*ROWS)
    r = pair_ss(items, scores, ties=ties)
    assert r.value == pytest.approx(value) and r.n == n
    assert r.details["ties"] == 1 and r.details["stereotypical_higher"] == 2
    assert r.options["ties"] == ties and r.ideal == 50.0


def test_unknown_tie_rule_lists_known():
    items, scores = pairs(*ROWS)
    with pytest.raises(UnknownNameError, match="exclude"):
        pair_ss(items, scores, ties="skip")


def test_pair_ss_on_stereoset_items_uses_stereotype_vs_anti():
    items = [stereoset_item("s1"), stereoset_item("s2")]
    scores = {**stereoset_scores("s1", 0.5, 0.1, 0.9), **stereoset_scores("s2", 0.1, 0.5, 0.0)}
    assert pair_ss(items, scores).value == 50.0  # the unrelated option plays no part


def test_all_ties_excluded_is_an_empty_scope():
    items, scores = pairs(("a", "X", -1, -1))
    with pytest.raises(EmptyScopeError):
        pair_ss(items, scores, ties="exclude")


def test_balanced_ss_unequal_groups_hand_computed():
    # X: 3 items, 2 stereotypical-higher (66.67); Y: 1 item, 0 (0.0); Z: 2 items, 2 (100)
    items, scores = pairs(
        ("a", "X", 0, -1), ("b", "X", 0, -1), ("c", "X", -1, 0), ("d", "Y", -1, 0), ("e", "Z", 0, -1), ("f", "Z", 0, -1)
    )
    r = balanced_ss(items, scores)
    assert r.unbalanced.value == pytest.approx(100 * 4 / 6)
    assert r.balanced.value == pytest.approx((200 / 3 + 0.0 + 100.0) / 3)
    # same as the weighted mean with weights 1/n_group
    w = {"X": 1 / 3, "Y": 1.0, "Z": 1 / 2}
    hits = {"a": 1, "b": 1, "c": 0, "d": 0, "e": 1, "f": 1}
    dims = {"a": "X", "b": "X", "c": "X", "d": "Y", "e": "Z", "f": "Z"}
    weighted = 100 * sum(w[dims[i]] * h for i, h in hits.items()) / sum(w[dims[i]] for i in hits)
    assert r.balanced.value == pytest.approx(weighted)
    assert {g: s.n for g, s in r.groups.items()} == {"X": 3, "Y": 1, "Z": 2}
    assert r.groups["Y"].weight == 1.0 and r.balanced.details["n_groups"] == 3
    assert r.to_dict()["groups"]["X"]["n"] == 3


def test_balanced_equals_unbalanced_for_equal_groups():
    items, scores = pairs(("a", "X", 0, -1), ("b", "X", -1, 0), ("c", "Y", 0, -1), ("d", "Y", 0, -1))
    r = balanced_ss(items, scores)
    assert r.balanced.value == r.unbalanced.value == 75.0


def test_balanced_by_bias_type():
    items = [pair_item("a", bias_type="gender"), pair_item("b", bias_type="gender"), pair_item("c", bias_type="race")]
    scores = {**pair_scores("a", 0, -1), **pair_scores("b", 0, -1), **pair_scores("c", -1, 0)}
    r = balanced_ss(items, scores, group_by="bias_type")
    assert r.balanced.value == 50.0 and r.unbalanced.value == pytest.approx(200 / 3) and r.group_by == "bias_type"


def test_missing_group_error_and_own_group():
    items, scores = pairs(("a", "X", 0, -1), ("b", None, -1, 0))
    with pytest.raises(ItemShapeError, match="1 item\\(s\\) have no 'dimension'"):
        balanced_ss(items, scores)
    r = balanced_ss(items, scores, missing_group="own-group")
    assert set(r.groups) == {"X", "(none)"} and r.balanced.value == 50.0
    x = balanced_ss(items, scores, missing_group="exclude")  # left out of both values, and counted
    assert set(x.groups) == {"X"} and x.balanced.value == x.unbalanced.value == 100.0
    assert x.unbalanced.n == 1 and x.options["excluded_untagged"] == 1


def test_unknown_group_attribute():
    items, scores = pairs(("a", "X", 0, -1))
    with pytest.raises(UnknownNameError, match="dimension"):
        balanced_ss(items, scores, group_by="dimensoin")


def test_exclude_ties_shrinks_group_sizes():
    items, scores = pairs(("a", "X", 0, -1), ("b", "X", 0, 0), ("c", "Y", -1, 0))
    r = balanced_ss(items, scores, ties="exclude")
    assert r.groups["X"].n == 1 and r.balanced.value == 50.0 and r.unbalanced.n == 2
