"""Conformance of the scoring methods with the reference goldens (shared/fixtures/golden).

Every per-sentence / per-pair number of every golden, with the tolerances of
``fixtures/README.md`` §5, and the summary numbers derived from them (CrowS-Pairs summary,
StereoSet ScoreEvaluator dicts via ``stereoset_eval.analysis.stereoset_metrics``).
"""

from __future__ import annotations

import math

import pytest

from conftest import load_golden

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

CROWS_NEAR_TIES = {551, 606, 775, 1038}  # README §5: |unrounded difference| < 0.002


def _score(items, models_dir, model, method, **kw):
    from stereoset_eval.scoring import score_items

    return score_items(items, model=str(models_dir / model), method=method, use_cache=False, **kw)


def _close(ours: float, ref: float, *, rel: float, abs_: float = 0.0) -> bool:
    return abs(ours - ref) <= abs_ or abs(ours - ref) <= rel * abs(ref)


def _assert_sentences(result, golden_rows, *, rel: float, abs_: float = 0.0, field: str = "score") -> None:
    bad = [(r["id"], result.scores.get(r["id"]), r[field]) for r in golden_rows
           if r["id"] not in result.scores or not _close(result.scores[r["id"]], r[field], rel=rel, abs_=abs_)]
    assert not bad, f"{len(bad)} of {len(golden_rows)} sentences differ, e.g. {bad[:3]}"
    assert len(result.scores) == len(golden_rows)


def _assert_results_dict(ours: dict, ref: dict, path: str = "") -> None:
    assert set(ours) == set(ref), f"{path}: keys {sorted(ours)} != {sorted(ref)}"
    for key, value in ref.items():
        if isinstance(value, dict):
            _assert_results_dict(ours[key], value, f"{path}/{key}")
        elif key == "Count":
            assert ours[key] == value, f"{path}/{key}"
        else:
            assert ours[key] == pytest.approx(value, abs=1e-9), f"{path}/{key}"


@pytest.fixture(scope="module")
def intra(stereoset_items):
    return [it for it in stereoset_items if it.task == "intrasentence"]


@pytest.fixture(scope="module")
def inter(stereoset_items):
    return [it for it in stereoset_items if it.task == "intersentence"]


# --- G1 CrowS-Pairs metric.py ----------------------------------------------------------------

@pytest.fixture(scope="module")
def g1(golden_dir):
    return load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")


@pytest.fixture(scope="module")
def crows_scores(crows_items, models_dir):
    return _score(crows_items, models_dir, "tiny-bert", "crows-nangia")


def test_g1_crows_sentence_scores(g1, crows_scores):
    assert crows_scores.provenance["method"]["options"]["lowercase"] is True  # uncased tokenizer, probed
    bad_rounded, bad_unrounded = [], []
    for p in g1["pairs"]:
        for side in ("more", "less"):
            rec = crows_scores.record(f"crows:{p['id']}:{side}")
            if abs(rec.score - p[f"sent_{side}_score"]) > 0.001 + 1e-9:
                bad_rounded.append((p["id"], side, rec.score, p[f"sent_{side}_score"]))
            if abs(rec.extra["unrounded"] - p[f"sent_{side}_score_unrounded"]) > 1e-4:
                bad_unrounded.append((p["id"], side, rec.extra["unrounded"], p[f"sent_{side}_score_unrounded"]))
            assert rec.score == round(rec.extra["unrounded"], 3)
    assert not bad_rounded and not bad_unrounded, (bad_rounded[:3], bad_unrounded[:3])


def test_g1_crows_pair_outcomes_and_summary(g1, crows_scores, crows_items):
    from stereoset_eval.analysis.crows_metric import crows_metric

    ours = {}
    for p in g1["pairs"]:
        more, less = crows_scores.scores[f"crows:{p['id']}:more"], crows_scores.scores[f"crows:{p['id']}:less"]
        ours[p["id"]] = 1 if more > less else 0
    differing = {i for i, p in enumerate(g1["pairs"]) if ours[p["id"]] != p["score"]}
    assert differing <= CROWS_NEAR_TIES, f"pair outcomes differ beyond the near ties: {sorted(differing)}"
    result = crows_metric(crows_items, crows_scores.scores)
    if not differing:
        s = g1["summary"]
        assert result.metric.value == s["metric_score"]
        assert result.stereotype.value == s["stereotype_score"]
        assert result.antistereotype.value == s["anti_stereotype_score"]
        assert result.neutral == s["neutral"]
        assert result.n_pairs == s["N"]
        printed = g1["summary_printed"]
        assert round(result.metric.value, 2) == printed["Metric score"]
        for bias, row in g1["per_bias_type"].items():
            assert result.per_bias_type[bias].value == pytest.approx(row["metric_score"], abs=1e-9)


# --- G2 / G4-NSP: StereoSet, tiny-bert ---------------------------------------------------------

@pytest.fixture(scope="module")
def g2(golden_dir):
    return load_golden(golden_dir, "g2_stereoset_intrasentence_mlm__tiny-bert.json")


@pytest.fixture(scope="module")
def g4_nsp(golden_dir):
    return load_golden(golden_dir, "g4_stereoset_intersentence_nsp__tiny-bert.json")


@pytest.fixture(scope="module")
def mlm_scores(intra, models_dir):
    return _score(intra, models_dir, "tiny-bert", "stereoset-mlm")


@pytest.fixture(scope="module")
def nsp_scores(inter, models_dir):
    return _score(inter, models_dir, "tiny-bert", "stereoset-nsp")


def test_g2_stereoset_mlm_sentences(g2, mlm_scores):
    _assert_sentences(mlm_scores, g2["sentences"], rel=1e-5, abs_=1e-8)
    for row in g2["sentences"]:
        rec = mlm_scores.record(row["id"])
        assert list(rec.token_ids) == row["target_token_ids"], row["id"]
        assert rec.extra["template_word"] == row["template_word"], row["id"]
    assert mlm_scores.provenance["method"]["options"] == {"leading_space": "none", "leading_space_applied": False}


def test_g4_stereoset_nsp_sentences(g4_nsp, nsp_scores):
    _assert_sentences(nsp_scores, g4_nsp["sentences"], rel=1e-5, abs_=1e-8)


def test_g2_g4_tiny_bert_score_evaluator(g2, g4_nsp, mlm_scores, nsp_scores, intra, inter):
    from stereoset_eval.analysis.stereoset_metrics import evaluate_stereoset

    result = evaluate_stereoset(intra + inter, {**mlm_scores.scores, **nsp_scores.scores})
    ours = result.to_official_dict(count="official")
    _assert_results_dict(ours, g2["score_evaluator_results"])
    _assert_results_dict(ours, g4_nsp["score_evaluator_results"])


# --- G3 / G4-LM: StereoSet, tiny-gpt2 ----------------------------------------------------------

@pytest.fixture(scope="module")
def g3(golden_dir):
    return load_golden(golden_dir, "g3_stereoset_intrasentence_causal__tiny-gpt2.json")


@pytest.fixture(scope="module")
def g4_lm(golden_dir):
    return load_golden(golden_dir, "g4_stereoset_intersentence_lm__tiny-gpt2.json")


@pytest.fixture(scope="module")
def causal_scores(intra, models_dir):
    return _score(intra, models_dir, "tiny-gpt2", "stereoset-causal")


@pytest.fixture(scope="module")
def inter_causal_scores(inter, models_dir):
    return _score(inter, models_dir, "tiny-gpt2", "stereoset-inter-causal")


def test_g3_stereoset_causal_sentences(g3, causal_scores):
    _assert_sentences(causal_scores, g3["sentences"], rel=1e-5)
    assert causal_scores.provenance["method"]["options"]["start_token"] == "<|endoftext|>"


def test_g4_stereoset_inter_causal_sentences(g4_lm, inter_causal_scores):
    _assert_sentences(inter_causal_scores, g4_lm["sentences"], rel=1e-5)


def test_g3_g4_tiny_gpt2_score_evaluator(g3, g4_lm, causal_scores, inter_causal_scores, intra, inter):
    from stereoset_eval.analysis.stereoset_metrics import evaluate_stereoset

    scores = {**causal_scores.scores, **inter_causal_scores.scores}
    ours = evaluate_stereoset(intra + inter, scores).to_official_dict(count="official")
    _assert_results_dict(ours, g3["score_evaluator_results_all"])
    _assert_results_dict(ours, g4_lm["score_evaluator_results_all"])
    # the reference as run: intersentence capped at its first 1,000 examples
    first = set(g4_lm["first1000_example_ids"])
    capped = [it for it in inter if it.id in first]
    assert [it.id for it in inter[:1000]] == [it.id for it in capped]
    ours = evaluate_stereoset(intra + capped, scores).to_official_dict(count="official")
    _assert_results_dict(ours, g4_lm["score_evaluator_results_as_run_first1000_intersentence"])


def test_example_cap_reproduces_the_reference_first_1000(g4_lm, inter, models_dir):
    capped = _score(inter[:12], models_dir, "tiny-gpt2", "stereoset-inter-causal", options={"example_cap": 2})
    assert [r.item_id for r in capped.records] == [it.id for it in inter[:2] for _ in range(3)]
    gold = {r["id"]: r["score"] for r in g4_lm["sentences"]}
    assert all(_close(v, gold[k], rel=1e-5) for k, v in capped.scores.items())


# --- G5 minicons PLL ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def g5(golden_dir):
    return load_golden(golden_dir, "g5_minicons_pll__tiny-bert.json")


def _check_pll(g5, result, rows) -> None:
    for method, field in (("pll", "pll_original"), ("pll-word-l2r", "pll_within_word_l2r")):
        res = result[method]
        bad = [(r["id"], res.scores[r["id"]], r[field]) for r in rows if abs(res.scores[r["id"]] - r[field]) > 1e-4]
        assert not bad, f"{method}: {len(bad)} sentences differ, e.g. {bad[:3]}"
        assert all(res.record(r["id"]).n_tokens == r["n_scored_tokens"] for r in rows)
        assert all(len(res.record(r["id"]).token_logprobs) == r["n_scored_tokens"] for r in rows)


def _pll_items(g5, crows_items, intra, n: int | None):
    rows = g5["sentences"] if n is None else [r for r in g5["sentences"] if r["dataset"] == "crows"][:n] + \
        [r for r in g5["sentences"] if r["dataset"] != "crows"][:n]
    wanted = {r["id"] for r in rows}
    items = [it for it in crows_items + intra if any(s.id in wanted for s in it.sentences)]
    return rows, items


def test_g5_pll_subset(g5, crows_items, intra, models_dir):
    rows, items = _pll_items(g5, crows_items, intra, 200)
    result = {m: _score(items, models_dir, "tiny-bert", m) for m in ("pll", "pll-word-l2r")}
    _check_pll(g5, result, rows)


@pytest.mark.slow
def test_g5_pll_full(g5, crows_items, intra, models_dir):
    rows, items = _pll_items(g5, crows_items, intra, None)
    result = {m: _score(items, models_dir, "tiny-bert", m) for m in ("pll", "pll-word-l2r")}
    _check_pll(g5, result, rows)
    for method, key in (("pll", "crows_pairs_more_gt_less_percent_original"),
                        ("pll-word-l2r", "crows_pairs_more_gt_less_percent_within_word_l2r")):
        s = result[method].scores
        wins = [s[f"{it.id}:more"] > s[f"{it.id}:less"] for it in crows_items]
        assert 100 * sum(wins) / len(wins) == pytest.approx(g5["summary"][key], abs=1e-9)
        assert math.isfinite(sum(s.values()))
