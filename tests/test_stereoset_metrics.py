"""StereoSet official and micro metrics: hand-computed cases, the published bert-base-cased
numbers and the G2/G3/G4 goldens of the original evaluation.py (all to 1e-9)."""

from __future__ import annotations

import json
import math

import pytest

from stereoset_eval.analysis.errors import EmptyScopeError, ItemShapeError, MissingScoresError
from stereoset_eval.analysis.stereoset_metrics import (
    TargetCounts,
    count_by_target,
    evaluate_stereoset,
    example_outcomes,
    icat_score,
    official_scores,
)
from stereoset_eval.analysis.stereoset_micro import evaluate_stereoset_micro
from stereoset_eval.analysis.toy_items import pair_item, stereoset_item, stereoset_scores
from conftest import load_golden

TOL = 1e-9


def toy(*rows):
    """rows: (item id, target, bias, task, stereotype, anti, unrelated) -> (items, scores)."""
    items, scores = [], {}
    for item_id, target, bias, task, s, a, u in rows:
        items.append(stereoset_item(item_id, target=target, bias_type=bias, task=task))
        scores.update(stereoset_scores(item_id, s, a, u))
    return items, scores


@pytest.mark.parametrize(
    "stereo, anti, unrelated, wins, related",
    [
        (0.5, 0.3, 0.1, True, 2),
        (0.3, 0.5, 0.1, False, 2),
        (0.3, 0.3, 0.1, False, 2),  # stereo/anti tie counts as anti
        (0.5, 0.3, 0.3, True, 1),  # anti ties the unrelated option: not related
        (0.5, 0.3, 0.5, True, 0),  # stereotype ties the unrelated option: not related
        (0.1, 0.2, 0.9, False, 0),
        (0.2, 0.2, 0.2, False, 0),  # all equal
    ],
)
def test_example_outcome_comparisons_are_strict(stereo, anti, unrelated, wins, related):
    items, scores = toy(("x", "t", "gender", "intrasentence", stereo, anti, unrelated))
    (o,) = example_outcomes(items, scores)
    assert (o.stereotype_wins, o.related) == (wins, related)


def test_hand_computed_scope_macro_over_targets():
    # nurse: 2 examples, 1 pro, related 2+1; chef: 1 example, pro, related 0
    items, scores = toy(
        ("a", "nurse", "profession", "intrasentence", 0.9, 0.1, 0.0),
        ("b", "nurse", "profession", "intrasentence", 0.1, 0.2, 0.15),
        ("c", "chef", "profession", "intrasentence", 0.5, 0.4, 0.6),
    )
    scope = evaluate_stereoset(items, scores)["intrasentence/profession"]
    ss_nurse, ss_chef = 50.0, 100.0
    lms_nurse, lms_chef = 100.0 * 3 / 4, 0.0
    assert scope.ss.value == pytest.approx((ss_nurse + ss_chef) / 2, abs=TOL)
    assert scope.lms.value == pytest.approx((lms_nurse + lms_chef) / 2, abs=TOL)
    assert scope.icat.value == pytest.approx(37.5 * min(75.0, 25.0) / 50, abs=TOL)
    assert (scope.n_examples, scope.n_targets, scope.official_count) == (3, 2, 9.0)
    assert scope.ss.ideal == 50.0 and scope.lms.ideal == 100.0 and scope.icat.ideal == 100.0


def test_target_with_one_example():
    items, scores = toy(("solo", "chess player", "profession", "intersentence", 0.2, 0.7, 0.1))
    ev = evaluate_stereoset(items, scores)
    for name in ("intersentence/profession", "intersentence/overall", "overall"):
        assert (ev[name].ss.value, ev[name].lms.value, ev[name].icat.value) == (0.0, 100.0, 0.0)
    assert "intrasentence/overall" not in ev.scopes


def test_overall_pools_tasks_per_target_not_mean_of_tasks():
    # target t: intra 1 example pro; inter 3 examples anti. target u: intra 1 anti.
    items, scores = toy(
        ("i1", "t", "race", "intrasentence", 1, 0, -1),
        ("i2", "u", "race", "intrasentence", 0, 1, -1),
        ("e1", "t", "race", "intersentence", 0, 1, -1),
        ("e2", "t", "race", "intersentence", 0, 1, -1),
        ("e3", "t", "race", "intersentence", 0, 1, -1),
    )
    ev = evaluate_stereoset(items, scores)
    assert ev["intrasentence/overall"].ss.value == 50.0  # (100 + 0) / 2
    assert ev["intersentence/overall"].ss.value == 0.0
    assert ev["overall"].ss.value == pytest.approx((25.0 + 0.0) / 2)  # t pooled: 1/4; u: 0
    assert ev["overall"].ss.value != (50.0 + 0.0) / 2
    assert ev["overall"].n_examples == 5 and ev["overall"].official_count == 5.0


def test_official_dict_nesting_and_count_modes():
    items, scores = toy(
        ("a", "t", "gender", "intrasentence", 1, 0, -1), ("b", "t", "religion", "intersentence", 1, 0, -1)
    )
    ev = evaluate_stereoset(items, scores)
    true = ev.to_official_dict(count="true")
    official = ev.to_official_dict(count="official")
    assert set(true) == {"intrasentence", "intersentence", "overall"}
    assert set(true["intrasentence"]) == {"gender", "overall"}
    assert true["intrasentence"]["gender"]["Count"] == 1 and official["intrasentence"]["gender"]["Count"] == 3.0
    assert official["intrasentence"]["overall"]["Count"] == 1.0 and official["overall"]["Count"] == 2.0
    assert set(true["overall"]) == {"Count", "LM Score", "SS Score", "ICAT Score"}
    with pytest.raises(ValueError):
        ev.to_official_dict(count="tripled")


def test_empty_scope_is_a_clear_error():
    with pytest.raises(EmptyScopeError, match="no StereoSet examples in scope 'overall'"):
        evaluate_stereoset([], {})
    with pytest.raises(EmptyScopeError):
        official_scores({})


def test_missing_scores_listed_never_skipped():
    items, scores = toy(*[(f"x{i}", "t", "gender", "intrasentence", 1, 0, -1) for i in range(8)])
    del scores["x3:unrelated"], scores["x5:stereotype"]
    with pytest.raises(MissingScoresError) as info:
        evaluate_stereoset(items, scores)
    assert "2 sentence id(s)" in str(info.value) and "x3:unrelated" in str(info.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "0.5", None, True])
def test_non_finite_score_names_the_id(bad):
    items, scores = toy(("x", "t", "gender", "intrasentence", 1, 0, -1))
    scores["x:anti-stereotype"] = bad
    with pytest.raises(Exception, match="x:anti-stereotype"):
        evaluate_stereoset(items, scores)


def test_pair_items_are_rejected():
    with pytest.raises(ItemShapeError, match="not a StereoSet example"):
        evaluate_stereoset([pair_item("p")], {"p:more": 1.0, "p:less": 0.0})


def test_icat_is_symmetric_around_50():
    assert icat_score(90.0, 40.0) == icat_score(90.0, 60.0) == pytest.approx(72.0)
    assert icat_score(100.0, 50.0) == 100.0


def test_count_by_target_keeps_first_appearance_order():
    items, scores = toy(("a", "z", "gender", "intrasentence", 1, 0, -1), ("b", "a", "gender", "intrasentence", 0, 1, 2))
    counts = count_by_target(example_outcomes(items, scores))
    assert list(counts) == ["z", "a"]
    assert counts["a"] == TargetCounts(pro=0, anti=1, related=0, total=1)


def test_micro_variant_hand_computed():
    items, scores = toy(
        ("a", "nurse", "gender", "intrasentence", 0.9, 0.1, 0.0),  # pro, unrelated below both
        ("b", "nurse", "gender", "intrasentence", 0.1, 0.2, 0.15),  # anti, unrelated above stereotype
        ("c", "chef", "gender", "intrasentence", 0.5, 0.4, 0.3),  # pro, below both
        ("d", "chef", "gender", "intrasentence", 0.5, 0.5, 0.3),  # tie -> anti, below both
    )
    micro = evaluate_stereoset_micro(items, scores)["overall"]
    assert (micro.lms.value, micro.ss.value) == (75.0, 50.0)
    assert micro.icat.value == 75.0
    assert micro.variant == "micro" and micro.ss.options["variant"] == "micro"
    official = evaluate_stereoset(items, scores)["overall"]
    assert official.lms.value == pytest.approx((75.0 + 100.0) / 2)  # nurse 3/4, chef 4/4


# ---- reference numbers ---------------------------------------------------------------


def _walk(ours, ref, path=""):
    """Yield (path, ours, ref) for every leaf of ``ref``."""
    for key, value in ref.items():
        if isinstance(value, dict):
            yield from _walk(ours[key], value, f"{path}/{key}")
        else:
            yield f"{path}/{key}", ours[key], value


def _assert_matches(ours: dict, ref: dict) -> int:
    n = 0
    for path, a, b in _walk(ours, ref):
        if path.endswith("/Count"):
            assert a == b, path  # exact
        else:
            assert a == pytest.approx(b, abs=TOL, rel=0), path
        n += 1
    return n


def test_bert_base_cased_published_numbers(stereoset_items, data_dir):
    """predictions_bert-base-cased + dev gold -> every LM/SS/ICAT/Count of the published file."""
    ref_dir = data_dir / "reference-results"
    preds = json.loads((ref_dir / "predictions_bert-base-cased_BertNextSentence_BertLM.json").read_text())
    scores = {p["id"]: p["score"] for task in preds.values() for p in task}
    published = json.loads((ref_dir / "stereoset_dev_scores_nadeem2021.json").read_text())["bert-base-cased"]
    ours = evaluate_stereoset(stereoset_items, scores).to_official_dict(count="official")
    assert _assert_matches(ours, published) == 44  # 11 scopes x 4 fields


def _golden_scores(golden_dir, *names):
    return {s["id"]: s["score"] for name in names for s in load_golden(golden_dir, name)["sentences"]}


def test_g2_g4_nsp_score_evaluator_results(stereoset_items, golden_dir):
    scores = _golden_scores(
        golden_dir, "g2_stereoset_intrasentence_mlm__tiny-bert.json", "g4_stereoset_intersentence_nsp__tiny-bert.json"
    )
    ref = load_golden(golden_dir, "g2_stereoset_intrasentence_mlm__tiny-bert.json")["score_evaluator_results"]
    ours = evaluate_stereoset(stereoset_items, scores).to_official_dict(count="official")
    assert _assert_matches(ours, ref) == 44
    assert ref == load_golden(golden_dir, "g4_stereoset_intersentence_nsp__tiny-bert.json")["score_evaluator_results"]


def test_g3_g4_lm_score_evaluator_results_all(stereoset_items, golden_dir):
    scores = _golden_scores(
        golden_dir, "g3_stereoset_intrasentence_causal__tiny-gpt2.json", "g4_stereoset_intersentence_lm__tiny-gpt2.json"
    )
    ref = load_golden(golden_dir, "g3_stereoset_intrasentence_causal__tiny-gpt2.json")["score_evaluator_results_all"]
    ours = evaluate_stereoset(stereoset_items, scores).to_official_dict(count="official")
    assert _assert_matches(ours, ref) == 44


def test_g3_g4_lm_as_run_first1000_intersentence(stereoset_items, golden_dir):
    g4 = load_golden(golden_dir, "g4_stereoset_intersentence_lm__tiny-gpt2.json")
    first = set(g4["first1000_example_ids"])
    items = [i for i in stereoset_items if i.task == "intrasentence" or i.id in first]
    assert sum(i.task == "intersentence" for i in items) == 1000
    scores = _golden_scores(
        golden_dir, "g3_stereoset_intrasentence_causal__tiny-gpt2.json", "g4_stereoset_intersentence_lm__tiny-gpt2.json"
    )
    ref = g4["score_evaluator_results_as_run_first1000_intersentence"]
    ours = evaluate_stereoset(items, scores).to_official_dict(count="official")
    assert _assert_matches(ours, ref) == 44
