"""The terminal results table, results.json and the leaderboard: read from the benchmarks' typed
headline results, never recomputed and never recognised by benchmark name."""

from __future__ import annotations

import json

import pytest

from stereoset_eval.analysis.benchmarks import EvaluationOptions, HeadlineContext, get_benchmark
from stereoset_eval.analysis.bootstrap import BootstrapConfig
from stereoset_eval.analysis.report_build import ModelResults, build_report
from stereoset_eval.analysis.report_model import Report
from stereoset_eval.analysis.results import ConfidenceInterval, HeadlineResult
from stereoset_eval.analysis.results_table import (
    format_leaderboard, format_table, leaderboard, mark_limited, result_rows, results_json, table_title,
)
from stereoset_eval.analysis.benchmarks.stereoset_reference import REFERENCE_SOURCE, published, reference_scores
from stereoset_eval.analysis.toy_items import pair_item, pair_scores, stereoset_item, stereoset_scores
from stereoset_eval.cli.main import main

CFG = BootstrapConfig(n_resamples=50, seed=1)


def _stereoset(task_items: dict[str, int]):
    items, scores = [], {}
    for task, n in task_items.items():
        for i in range(n):
            iid = f"{task[:5]}{i}"
            items.append(stereoset_item(iid, target=f"t{i % 3}", task=task))
            scores.update(stereoset_scores(iid, -float(i % 3), -float(i % 2), -3.0))
    return get_benchmark("stereoset").evaluate(items, scores, EvaluationOptions(bootstrap=CFG))


def test_published_dev_scores_need_model_method_split_and_no_limit():
    ref = reference_scores()["gpt2"]
    assert published("gpt2", "stereoset-causal", "intrasentence", "ss", 2106, "official") == pytest.approx(
        ref["intrasentence"]["overall"]["SS Score"])
    assert published("gpt2", "stereoset-causal, stereoset-inter-causal", "overall", "icat", 2106 + 2123,
                     "official") == pytest.approx(ref["overall"]["ICAT Score"])
    assert published("gpt2", "causal-ll", "intrasentence", "ss", 2106, "official") is None  # not the paper's method
    assert published("gpt2", "stereoset-causal", "intrasentence", "ss", 2000, "official") is None  # not the full split
    assert published("gpt2", "stereoset-causal", "intrasentence", "ss", 2106, "micro") is None
    assert published("my-model", "stereoset-causal", "intrasentence", "ss", 2106, "official") is None
    row = HeadlineResult("StereoSet intrasentence", "gpt2", "stereoset-causal", "ss", 60.0, None, 50.0, 2106,
                         reference=61.0, reference_source=REFERENCE_SOURCE)
    report = Report("r", (), {}, results=(row,))
    assert result_rows(report)[0].reference == 61.0 and "published ss · lms · icat" in format_table([row])
    assert result_rows(report, limit=10)[0].reference is None  # a limited run shows none


def test_stereoset_gives_each_task_and_both_and_never_a_one_task_overall():
    one = _stereoset({"intrasentence": 6}).headline_results(HeadlineContext("m", "pll"))
    assert [(r.benchmark, r.metric) for r in one] == [("StereoSet intrasentence", m) for m in ("lms", "ss", "icat")]
    both = _stereoset({"intrasentence": 6, "intersentence": 4}).headline_results(
        HeadlineContext("m", "a, b", part_methods={"intrasentence": "a", "intersentence": "b"}))
    assert [r.benchmark for r in both[::3]] == ["StereoSet intrasentence", "StereoSet intersentence",
                                                "StereoSet intra+inter overall"]
    assert [r.method for r in both[::3]] == ["a", "b", "a, b"]
    assert [(r.metric, r.leaderboard, r.ranked) for r in both if r.leaderboard] == [
        ("ss", "StereoSet ss", True), ("icat", "StereoSet icat", False)]  # of both tasks only
    assert [r.n for r in both[::3]] == [6, 4, 10] and all(r.n_left_out == 0 for r in both)


def _curated(with_untagged: int):
    items = [pair_item(f"p{i}", dimension=None if i < with_untagged else ["Roles", "Traits"][i % 2],
                       direction="stereo") for i in range(12)]
    scores = {k: v for i in range(12) for k, v in pair_scores(f"p{i}", -float(i % 3), -1.0).items()}
    return items, scores


def test_pairs_left_out_are_counted_with_the_reason_in_the_table_results_json_and_the_report():
    items, scores = _curated(with_untagged=2)
    ev = get_benchmark("pairs").evaluate(items, scores, EvaluationOptions(bootstrap=CFG))  # missing-group: exclude
    report = build_report(ModelResults("m", (ev,)), {"method": "pll"})
    rows = result_rows(report)
    assert [(r.metric, r.n, r.n_left_out) for r in rows] == [("pair ss", 10, 2), ("balanced ss (dimension)", 10, 2)]
    assert all(r.left_out_reason == "no dimension value (missing-group rule 'exclude')" for r in rows)
    flat = json.loads(results_json(rows))
    assert flat[0]["n"] == 10 and flat[0]["n_left_out"] == 2 and "exclude" in flat[0]["left_out_reason"]
    table = format_table(rows)
    assert "|  n | left out |" in table and "| 10 |        2 |" in table
    assert "m, Harmonised pairs: 2 left out — no dimension value (missing-group rule 'exclude')" in table
    section = report.sections[0]
    assert section.key == "results" and section.tables[0].rows[0][-3:] == (
        "10", "2", "no dimension value (missing-group rule 'exclude')")
    own = get_benchmark("pairs").evaluate(items, scores, EvaluationOptions(bootstrap=CFG, missing_group="own-group"))
    assert [(r.n, r.n_left_out) for r in own.headline_results(HeadlineContext("m"))] == [(12, 0), (12, 0)]


def test_results_json_is_flat_with_the_documented_fields_and_read_back_typed():
    ci = ConfidenceInterval(50.0, 60.0, 0.95, "percentile", 50, 1, "pairs")
    row = HeadlineResult("CrowS-Pairs", "m", None, "metric score", 55.0, ci, 50.0, 3, column="ss / metric")
    report = Report("r", (), {"options": {"limit": 3}}, results=(row,))
    rows = json.loads(results_json(result_rows(report)))
    assert rows == [{"model": "m", "method": None, "benchmark": "CrowS-Pairs", "metric": "metric score", "value": 55.0,
                     "ci_low": 50.0, "ci_high": 60.0, "n": 3, "n_left_out": 0, "left_out_reason": None, "ideal": 50.0,
                     "limit": 3, "reference": None, "reference_source": None}]
    assert format_table(result_rows(report)).startswith("LIMITED RUN (first 3 items")
    back = result_rows(json.loads(json.dumps(report.to_dict())))  # report.json's results, read back typed
    assert back == result_rows(report)


def test_mark_limited_titles_every_table():
    from stereoset_eval.analysis.report_model import Section, Table

    report = Report("r", (Section("a", "A", tables=(Table("t1", ("x",), (("1",),)), Table("t2", ("x",), ()))),), {})
    marked = mark_limited(report, 5)
    assert all(t.title.startswith("LIMITED RUN") for s in marked.sections for t in s.tables)
    assert marked.title == table_title("r", 5) and mark_limited(report, None) is report


def test_report_command_prints_the_table_and_writes_results_json(tmp_path, capsys, data_dir, golden_dir):
    """On the official bert-base-cased predictions: our table shows the published numbers beside ours."""
    preds = data_dir / "reference-results" / "predictions_bert-base-cased_BertNextSentence_BertLM.json"
    rc = main(["report", "--benchmark", "stereoset", "--data", str(data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv"),
               "--scores", str(preds), "--out", str(tmp_path / "r"), "--model", "bert-base-cased",
               "--method", "stereoset-mlm, stereoset-nsp", "--bootstrap", "50"])
    out = capsys.readouterr().out
    assert rc == 0
    rows = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    official = next(s for s in report["sections"] if s["key"].startswith("stereoset-official"))
    ss = next(r for r in rows if r["benchmark"] == "StereoSet intrasentence" and r["metric"] == "ss")
    assert ss["value"] == official["data"]["scopes"]["intrasentence/overall"]["ss"]["value"]  # read, not recomputed
    assert ss["reference"] == pytest.approx(ss["value"], abs=1e-9)  # the official file reproduces the paper
    assert ss["n"] == 2106 and ss["n_left_out"] == 0
    combined = [r for r in rows if r["benchmark"] == "StereoSet intra+inter overall"]
    assert len(combined) == 3 and all(r["reference"] == pytest.approx(r["value"], abs=1e-9) for r in combined)
    assert "| bert-base-cased" in out and "published ss · lms · icat" in out and "| left out |" in out


def _row(model, benchmark, metric, value, method="pll", *, own=False, board=True):
    ideal = 50.0 if metric != "icat" else 100.0
    return HeadlineResult(benchmark, model, method, metric, value, ConfidenceInterval(value - 2, value + 2, 0.95,
                          "percentile", 50, 1, "x"), ideal, 10, own_method=own,
                          leaderboard=f"{benchmark.split(' ')[0]} {metric}" if board else None,
                          ranked=metric != "icat")


def test_leaderboard_one_row_per_model_ranked_by_distance_from_50():
    rows = [
        _row("a", "StereoSet intrasentence", "ss", 60.0, "stereoset-mlm", own=True),
        _row("a", "StereoSet intrasentence", "ss", 70.0, "pll"),  # not the benchmark's own method: not shown
        _row("a", "StereoSet intrasentence", "icat", 80.0, "stereoset-mlm", own=True),
        _row("a", "StereoSet intrasentence", "lms", 90.0, "stereoset-mlm", own=True, board=False),  # not on it
        _row("a", "CrowS-Pairs", "metric", 54.0, "crows-nangia", own=True),
        _row("b", "StereoSet intrasentence", "ss", 45.0, "causal-ll"),
        _row("b", "CrowS-Pairs", "metric", 49.0, "causal-ll"),
        _row("c", "StereoSet intrasentence", "ss", 53.0, "causal-ll"),
        _row("c", "CrowS-Pairs", "metric", 47.0, "causal-ll"),  # |3| + |3| = b's |5| + |1|: a shared rank
        _row("d", "StereoSet intrasentence", "ss", 50.0, "causal-ll"),  # no CrowS-Pairs: unranked
    ]
    columns, board = leaderboard(rows)
    assert columns == ["StereoSet ss", "StereoSet icat", "CrowS-Pairs metric"]
    assert [(r.model, r.rank, r.bias) for r in board] == [("b", 1, 3.0), ("c", 1, 3.0), ("a", 3, 7.0),
                                                          ("d", None, None)]
    assert board[2].cells["StereoSet ss"].method == "stereoset-mlm" and board[2].cells["StereoSet ss"].value == 60.0
    text = format_leaderboard(rows, limit=5)
    assert text.startswith("LIMITED RUN (first 5 items") and "| rank | model" in text
    assert "|    1 | b     |" in text and "|    – | d     |" in text
    assert format_leaderboard(rows[:5]) == ""  # one model: nothing to rank


def test_the_built_in_benchmarks_prefer_their_own_reference_code_on_the_leaderboard():
    assert get_benchmark("stereoset").is_reference_method("stereoset-mlm, stereoset-nsp")
    assert get_benchmark("crows-pairs").is_reference_method("crows-nangia")
    assert not get_benchmark("crows-pairs").is_reference_method("causal-ll")  # bias-bench's, not metric.py's
    assert not get_benchmark("stereoset").is_reference_method("pll")
