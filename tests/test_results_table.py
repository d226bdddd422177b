"""The terminal results table and results.json: read from the report's data, never recomputed."""

from __future__ import annotations

import json

import pytest

from stereoset_eval.analysis.results_table import (
    format_table, mark_limited, reference_scores, result_rows, results_json, table_title,
)
from stereoset_eval.cli.main import main


def _metric(name, value, low, high, n, ideal):
    return {"name": name, "value": value, "n": n, "ideal": ideal, "ci": {"low": low, "high": high}}


def _stereoset_section(model, scopes, key="stereoset-official/m"):
    return {"key": key, "title": "t", "data": {"model": model, "variant": "official", "scopes": {
        scope: {m: _metric(m, v, v - 1, v + 1, n, 50.0 if m == "ss" else 100.0) for m, v in metrics.items()}
        for scope, (n, metrics) in scopes.items()}}}


def test_published_dev_scores_are_shown_when_model_method_and_split_match():
    report = {"provenance": {"method": "stereoset-causal, stereoset-inter-causal", "model": {"id": "gpt2"}},
              "sections": [_stereoset_section("gpt2", {"intrasentence/overall": (2106, {"ss": 62.0, "lms": 91.0}),
                                                        "intersentence/overall": (2123, {"ss": 58.0})})]}
    rows = result_rows(report)
    published = reference_scores()["gpt2"]
    ss_intra = next(r for r in rows if r.benchmark == "StereoSet intrasentence" and r.metric == "ss")
    assert ss_intra.reference == pytest.approx(published["intrasentence"]["overall"]["SS Score"])
    assert ss_intra.reference_source.startswith("Nadeem et al. 2021")
    assert "published ss · lms · icat" in format_table(rows)
    # a limited run or a model without published numbers gets none
    assert all(r.reference is None for r in result_rows(report, limit=10))
    other = {**report, "sections": [_stereoset_section("my-model", {"intrasentence/overall": (2106, {"ss": 60.0})})]}
    assert all(r.reference is None for r in result_rows(other))


def test_a_study_overall_of_one_task_is_not_labelled_overall():
    section = _stereoset_section("m · pll", {"intrasentence/overall": (5, {"ss": 60.0}), "overall": (5, {"ss": 60.0})},
                                 key="detail/StereoSet/m/pll")
    rows = result_rows({"provenance": {}, "sections": [section]})
    assert [(r.model, r.method, r.benchmark) for r in rows] == [("m", "pll", "StereoSet intrasentence")]


def test_results_json_is_flat_with_the_documented_fields():
    report = {"provenance": {"options": {"limit": 3}}, "sections": [
        {"key": "crows/CrowS-Pairs/m", "data": {"model": "m", "benchmark": "CrowS-Pairs", "summary": {},
                                                "metric": _metric("crows_metric", 55.0, 50.0, 60.0, 3, 50.0)}}]}
    rows = json.loads(results_json(result_rows(report)))
    assert rows == [{"model": "m", "method": None, "benchmark": "CrowS-Pairs", "metric": "metric score", "value": 55.0,
                     "ci_low": 50.0, "ci_high": 60.0, "n": 3, "ideal": 50.0, "limit": 3, "reference": None,
                     "reference_source": None}]
    assert format_table(result_rows(report)).startswith("LIMITED RUN (first 3 items")


def test_mark_limited_titles_every_table():
    from stereoset_eval.analysis.report_model import Report, Section, Table

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
    combined = [r for r in rows if r["benchmark"] == "StereoSet intra+inter overall"]
    assert len(combined) == 3 and all(r["reference"] == pytest.approx(r["value"], abs=1e-9) for r in combined)
    assert "| bert-base-cased" in out and "published ss · lms · icat" in out


def test_a_study_maps_model_names_to_ids_for_the_published_numbers():
    section = _stereoset_section("GPT-2 · stereoset-causal", {"intrasentence/overall": (2106, {"ss": 62.0})},
                                 key="detail/StereoSet/GPT-2/stereoset-causal")
    report = {"provenance": {"extra": {"models": [{"name": "GPT-2", "id": "gpt2"}]}}, "sections": [section]}
    (row,) = result_rows(report)
    assert (row.model, row.method, row.benchmark) == ("GPT-2", "stereoset-causal", "StereoSet intrasentence")
    assert row.reference == pytest.approx(reference_scores()["gpt2"]["intrasentence"]["overall"]["SS Score"])
    pll = _stereoset_section("GPT-2 · causal-ll", {"intrasentence/overall": (2106, {"ss": 62.0})},
                             key="detail/StereoSet/GPT-2/causal-ll")
    assert result_rows({**report, "sections": [pll]})[0].reference is None  # not the paper's method


def _row(model, benchmark, metric, value, method="pll"):
    from stereoset_eval.analysis.results_table import ResultRow

    return ResultRow(model=model, method=method, benchmark=benchmark, metric=metric, value=value, ci_low=value - 2,
                     ci_high=value + 2, n=10, ideal=50.0 if metric != "icat" else 100.0)


def test_leaderboard_one_row_per_model_ranked_by_distance_from_50():
    from stereoset_eval.analysis.results_table import format_leaderboard, leaderboard

    rows = [
        _row("a", "StereoSet intrasentence", "ss", 60.0, "stereoset-mlm"),
        _row("a", "StereoSet intrasentence", "ss", 70.0, "pll"),  # not the benchmark's own method: not shown
        _row("a", "StereoSet intrasentence", "icat", 80.0, "stereoset-mlm"),
        _row("a", "CrowS-Pairs", "metric score", 54.0, "crows-nangia"),
        _row("b", "StereoSet intrasentence", "ss", 45.0, "causal-ll"),
        _row("b", "CrowS-Pairs", "metric score", 49.0, "causal-ll"),
        _row("c", "StereoSet intrasentence", "ss", 53.0, "causal-ll"),
        _row("c", "CrowS-Pairs", "metric score", 47.0, "causal-ll"),  # |3| + |3| = b's |5| + |1|: a shared rank
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
    assert format_leaderboard(rows[:4]) == ""  # one model: nothing to rank
