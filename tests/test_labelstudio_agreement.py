"""Cohen's kappa: hand-computed values, the server scenario, and sklearn when installed."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from stereoset_eval.curation.labelstudio.agreement import AGREEMENT_COLUMNS, cohen_kappa, pairwise_agreement
from stereoset_eval.curation.labelstudio.annotations import Annotation, load_export, parse_export

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

    Kappa = (p_o - p_e) / (1 - p_e); with n shared items, p_o = agree / n and
    p_e = sum over labels of count_A * count_B / n^2, so kappa = (n*agree - S) / (n^2 - S)
    with S = sum of count_A * count_B.
    Shared items: A's usable annotations cover items 0-19 (item 17: the later one), B's
    items 0-17 (18 empty, 19 cancelled), so n = 18 (items 0-17).

    decision, n = 18: A keep 13 (0-11, 15) / edit 3 (12, 13, 16) / remove 2 (14, 17);
    B keep 12 (0-4, 6-11, 16) / edit 2 (12, 13) / remove 4 (5, 14, 15, 17); equal on 15
    (not on 5, 15, 16). S = 13*12 + 3*2 + 2*4 = 170;
    kappa = (18*15 - 170)/(324 - 170) = 100/154 = 50/77 = 0.649.
    dimension, n = 17 (B gave none for item 16): A R10 At1 P4 Ph1 U1, B R10 At2 P2 Ph1 U2;
    equal on 15 (items 10 P/At and 11 P/U differ). S = 100 + 2 + 8 + 1 + 2 = 113;
    kappa = (17*15 - 113)/(289 - 113) = 142/176 = 71/88 = 0.807.
    pitfall X (inconsistent_gender), n = 18: A checks {14, 16, 17}, B {14, 15, 17}; equal on
    16 (not on 15, 16). S = 3*3 + 15*15 = 234; kappa = (288 - 234)/(324 - 234) = 54/90 = 3/5.
    pitfall Y (swap labels), n = 18: A checks {12, 13}, B {13}; equal on 17.
    S = 2*1 + 16*17 = 274; kappa = (306 - 274)/(324 - 274) = 32/50 = 16/25 = 0.64.
    pitfall W (not a meaningful stereotype), n = 18: A checks none, B {3, 5}; equal on 16.
    S = 18*16 + 0*2 = 288; kappa = (288 - 288)/(324 - 288) = 0: agreement at chance level
    when one annotator never uses a label.
    Every other pitfall: nobody checked it, p_e = 1, kappa undefined (NaN).
    """
    names = META["pitfalls"]
    expected = {"decision": (18, 15 / 18, 50 / 77), "dimension": (17, 15 / 17, 71 / 88),
                f"pitfall:{names['X']}": (18, 16 / 18, 3 / 5), f"pitfall:{names['Y']}": (18, 17 / 18, 16 / 25),
                f"pitfall:{names['W']}": (18, 16 / 18, 0.0)}
    for field, (n, observed, kappa) in expected.items():
        row = table.loc[field]
        assert (row["n"], row["observed"], row["kappa"]) == (n, pytest.approx(observed), pytest.approx(kappa)), field
        assert {row["annotator_a"], row["annotator_b"]} == set(META["annotators"].values())
    others = [f"pitfall:{p}" for p in META["pitfall_names"] if p not in names.values()]
    assert len(others) == len(META["pitfall_names"]) - 3
    assert all(math.isnan(table.loc[f, "kappa"]) and table.loc[f, "n"] == 18 for f in others)


def test_kappa_of_the_server_scenario_by_formula(table):
    """The same numbers from the label lists of the plan, through cohen_kappa itself."""
    plan = json.loads((FIXTURES / "labelstudio_plan.json").read_text(encoding="utf-8"))
    latest = {(a["by"], a["item"]): a for a in plan["annotations"]}  # later entries supersede earlier ones
    shared = [i for i in range(22) if all(("decision" in latest.get((w, i), {})) for w in "AB")]
    assert shared == list(range(18))
    decisions = [[latest[w, i]["decision"] for i in shared] for w in "AB"]
    assert table.loc["decision", "kappa"] == pytest.approx(cohen_kappa(*decisions))
    with_dim = [i for i in shared if all("dimension" in latest[w, i] for w in "AB")]
    dims = [[latest[w, i]["dimension"] for i in with_dim] for w in "AB"]
    assert table.loc["dimension", "kappa"] == pytest.approx(cohen_kappa(*dims))


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

    import stereoset_eval.curation.labelstudio.agreement as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 3 and result.failed == 0
