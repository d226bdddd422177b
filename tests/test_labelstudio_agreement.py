"""Cohen's kappa: hand-computed values, the server scenario, and sklearn when installed."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from curation.labelstudio.agreement import AGREEMENT_COLUMNS, cohen_kappa, pairwise_agreement
from curation.labelstudio.annotations import Annotation, load_export, parse_export

FIXTURES = Path(__file__).resolve().parent / "fixtures"
META = json.loads((FIXTURES / "labelstudio_meta.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("a, b, expected", [
    # p_o = 3/4; marginals x: 2/4 vs 1/4, y: 2/4 vs 3/4 -> p_e = 1/8 + 3/8 = 1/2; (3/4-1/2)/(1/2)
    (list("xxyy"), list("xyyy"), 0.5),
    # Cohen-style 2x2 table: yes/yes 20, yes/no 5, no/yes 10, no/no 15 (n 50): p_o = 35/50,
    # p_e = (25*30 + 25*20)/2500 = 1/2 -> (0.7 - 0.5)/0.5 = 0.4
    (["y"] * 25 + ["n"] * 25, ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15, 0.4),
    # total disagreement on a balanced binary: p_o = 0, p_e = 1/2 -> -1
    ([1, 0], [0, 1], -1.0),
    # three categories, one b read as c: p_o = 5/6, p_e = (2*2 + 2*1 + 2*3)/36 = 1/3
    # -> (5/6 - 1/3)/(2/3) = 3/4
    (list("aabbcc"), list("aabccc"), 0.75),
    ([True, False, True], [True, False, True], 1.0),
])
def test_cohen_kappa_hand_values(a, b, expected):
    assert cohen_kappa(a, b) == pytest.approx(expected)


@pytest.mark.parametrize("a, b", [([], []), (["keep"] * 5, ["keep"] * 5)])
def test_cohen_kappa_undefined(a, b):
    assert math.isnan(cohen_kappa(a, b))


def test_cohen_kappa_length_mismatch():
    with pytest.raises(ValueError, match="differ in length"):
        cohen_kappa([1, 2], [1])


def test_cohen_kappa_matches_sklearn():
    metrics = pytest.importorskip("sklearn.metrics", reason="sklearn is not a dependency; cross-check only")
    rng = random.Random(0)
    for _ in range(50):
        n = rng.randint(2, 40)
        a = [rng.choice("abcd") for _ in range(n)]
        b = [x if rng.random() < 0.6 else rng.choice("abcd") for x in a]
        if len(set(a) | set(b)) > 1:
            assert cohen_kappa(a, b) == pytest.approx(metrics.cohen_kappa_score(a, b))


@pytest.fixture(scope="module")
def table():
    parsed = parse_export(load_export(FIXTURES / "labelstudio_export.json"), pitfall_names=META["pitfall_names"])
    return pairwise_agreement(parsed.annotations, pitfall_names=META["pitfall_names"]).set_index("field")


def test_kappa_of_the_server_scenario(table):
    """Hand computation for fixtures/labelstudio_plan.json (A = expert, B = checker).

    decision, n = 18 shared items (0-17): A keep 13 / edit 3 / remove 2, B keep 13 / edit 2 /
    remove 3; equal on 16 (items 15, 16 differ). p_o = 16/18, p_e = (13*13 + 3*2 + 2*3)/18^2
    = 181/324; kappa = (288 - 181)/(324 - 181) = 107/143 = 0.748.
    dimension, n = 17 (B gave none for item 16): A R8 At4 P3 Ph1 U1, B R7 At5 P2 Ph1 U2;
    equal on 15 (items 10, 11 differ). p_e = (56 + 20 + 6 + 1 + 2)/289 = 85/289;
    kappa = (255 - 85)/(289 - 85) = 170/204 = 5/6 = 0.833.
    pitfall X, n = 18: A checks {14, 15, 17}, B {3, 14, 15, 17}: p_o = 17/18,
    p_e = (3*4 + 15*14)/324 = 222/324; kappa = (306 - 222)/(324 - 222) = 84/102 = 14/17 = 0.824.
    pitfall Y (swap labels), n = 18: A checks {12}, B {13}: p_o = 16/18,
    p_e = (1 + 17*17)/324 = 290/324; kappa = (288 - 290)/(324 - 290) = -2/34 = -1/17 = -0.059.
    Every other pitfall: nobody checked it, p_e = 1, kappa undefined (NaN).
    """
    x, y = META["pitfalls"]["X"], META["pitfalls"]["Y"]
    expected = {"decision": (18, 16 / 18, 107 / 143), "dimension": (17, 15 / 17, 5 / 6),
                f"pitfall:{x}": (18, 17 / 18, 14 / 17), f"pitfall:{y}": (18, 16 / 18, -1 / 17)}
    for field, (n, observed, kappa) in expected.items():
        row = table.loc[field]
        assert (row["n"], row["observed"], row["kappa"]) == (n, pytest.approx(observed), pytest.approx(kappa)), field
        assert {row["annotator_a"], row["annotator_b"]} == set(META["annotators"].values())
    others = [f"pitfall:{p}" for p in META["pitfall_names"] if p not in (x, y)]
    assert len(others) == len(META["pitfall_names"]) - 2
    assert all(math.isnan(table.loc[f, "kappa"]) and table.loc[f, "n"] == 18 for f in others)


def _ann(item, who, decision, dimension=None, pitfalls=()):
    return Annotation(item, 1, hash((item, who)) % 10_000, who, "2026-01-01T00:00:00Z", decision, dimension,
                      frozenset(pitfalls))


def test_three_annotators_give_three_pairs():
    anns = [_ann(f"i{k}", who, d) for k in range(4) for who, d in
            (("a", "keep"), ("b", "keep" if k else "remove"), ("c", "keep"))]
    table = pairwise_agreement(anns, pitfall_names=["p"])
    assert list(table.columns) == list(AGREEMENT_COLUMNS)
    pairs = sorted({(r.annotator_a, r.annotator_b) for r in table.itertuples()})
    assert pairs == [("a", "b"), ("a", "c"), ("b", "c")]
    decision = table[table.field == "decision"].set_index(["annotator_a", "annotator_b"])
    assert math.isnan(decision.loc[("a", "c"), "kappa"]) and decision.loc[("a", "c"), "observed"] == 1.0
    assert decision.loc[("a", "b"), "n"] == 4 and decision.loc[("a", "b"), "observed"] == 0.75


def test_no_shared_items_gives_n_zero():
    table = pairwise_agreement([_ann("i1", "a", "keep"), _ann("i2", "b", "keep")], pitfall_names=[])
    assert (table["n"] == 0).all() and table["kappa"].isna().all()


def test_duplicates_are_refused():
    with pytest.raises(ValueError, match="de-duplicate"):
        pairwise_agreement([_ann("i1", "a", "keep"), _ann("i1", "a", "edit")], pitfall_names=[])


def test_doctests_of_the_agreement_module():
    import doctest

    import curation.labelstudio.agreement as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0
