"""A new benchmark is one file: written here as a module of its own, imported, and it shows up in
the terminal results table, results.json, the report and the leaderboard with no other file touched.

The module below defines only what a benchmark must (``evaluate`` and ``report_sections``); its
headline results come from :meth:`Benchmark.headline_results`' default (its headline metric,
ranked on the leaderboard).
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap

import pytest

from stereoset_eval.analysis.benchmarks import BENCHMARKS
from stereoset_eval.cli.main import main

TOY_MODULE = '''
import json
from pathlib import Path

from stereoset_eval.analysis.benchmarks import Benchmark, Evaluation, Source, register
from stereoset_eval.analysis.bootstrap import pair_ss_with_ci
from stereoset_eval.analysis.report_model import Section, Table, fmt_ci
from stereoset_eval.analysis.toy_items import pair_item


class ToyAgreement(Benchmark):
    name = "toy-agreement"
    title = "Toy agreement"
    description = "a toy pair benchmark: one JSON list of [id, bias type] rows"
    loader_family = "pairs"
    sources = (Source("toy-agreement", "a toy agreement file"),)
    score_methods = {"pairs": {"masked": "crows-nangia", "causal": "causal-ll"}}
    own_methods = {"masked": "pll", "causal": "causal-ll"}

    def load(self, path):
        return [pair_item(i, bias_type=b) for i, b in json.loads(Path(path).read_text())]

    def evaluate(self, items, scores, options, *, title=None):
        agreement = pair_ss_with_ci(items, scores, ties=options.ties, config=options.bootstrap)
        return Evaluation(self, title or self.title, {"agreement": agreement}, headline=agreement)

    def report_sections(self, evaluation, *, model):
        r = evaluation.parts["agreement"]
        table = Table(f"{model}: agreement", ("metric", "n", "value"), (("agreement", str(r.n), fmt_ci(r.value, r.ci)),))
        return [Section(f"toy/{evaluation.title}/{model}", f"{evaluation.title}: {model}", tables=(table,))]


register(ToyAgreement())
'''


@pytest.fixture
def toy(tmp_path):
    module = tmp_path / "toy_agreement.py"
    module.write_text(textwrap.dedent(TOY_MODULE))
    spec = importlib.util.spec_from_file_location("toy_agreement", module)
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # registers it, as importing a plugin does
    data = tmp_path / "toy.json"
    data.write_text(json.dumps([[f"p{i}", "age" if i % 2 else "gender"] for i in range(12)]))
    yield data
    BENCHMARKS.remove("toy-agreement")
    sys.modules.pop("toy_agreement", None)


def _scores(tmp_path, shift):
    path = tmp_path / f"scores{shift}.csv"
    path.write_text("sentence_id,score\n" + "".join(
        f"p{i}:more,{-1.0 - ((i + shift) % 3)}\np{i}:less,{-2.0 + (i % 2)}\n" for i in range(12)))
    return path


def test_a_one_file_benchmark_is_in_the_table_results_json_and_the_report(toy, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", "--benchmark", "toy-agreement", "--data", str(toy), "--scores", str(_scores(tmp_path, 0)),
                 "--out", str(out), "--model", "toy-model", "--method", "pll", "--bootstrap", "50"]) == 0
    table = capsys.readouterr().out
    (row,) = json.loads((out / "results.json").read_text())
    assert (row["model"], row["method"], row["benchmark"], row["metric"]) == ("toy-model", "pll", "Toy agreement",
                                                                           "pair ss")
    assert row["n"] == 12 and row["n_left_out"] == 0 and row["ideal"] == 50.0 and row["ci_low"] <= row["value"]
    line = next(t for t in table.splitlines() if t.startswith("| toy-model"))
    assert line.split("|")[1:-1] == [" toy-model ", " pll    ", " Toy agreement ", " 12 ", "        0 ",
                                     f"    {row['value']:.2f} [{row['ci_low']:.2f}, {row['ci_high']:.2f}] "]
    doc = json.loads((out / "report.json").read_text())
    results = next(s for s in doc["sections"] if s["key"] == "results")
    assert results["data"]["results"] == [row]  # the report's results section: the same row
    assert "Toy agreement" in (out / "report.md").read_text() and "Toy agreement" in (out / "report.html").read_text()


def test_a_one_file_benchmark_is_on_the_leaderboard(toy, tmp_path):
    from stereoset_eval.analysis.benchmarks import EvaluationOptions, HeadlineContext, get_benchmark
    from stereoset_eval.analysis.bootstrap import BootstrapConfig
    from stereoset_eval.analysis.report_model import Report
    from stereoset_eval.analysis.report_writer import write_report
    from stereoset_eval.analysis.results_table import format_leaderboard, leaderboard_section
    from stereoset_eval.foundation.score_file import read_scores

    bench = get_benchmark("toy-agreement")
    items = bench.load(toy)
    rows = []
    for shift, model in enumerate(("m-a", "m-b", "m-c")):
        scores = read_scores(_scores(tmp_path, shift)).scores
        ev = bench.evaluate(items, scores, EvaluationOptions(bootstrap=BootstrapConfig(n_resamples=30)))
        rows += ev.headline_results(HeadlineContext(model, "pll"))
    board = format_leaderboard(rows)
    assert "Toy agreement pair ss" in board and all(f"| {m}" in board for m in ("m-a", "m-b", "m-c"))
    section = leaderboard_section(rows)
    assert [r["rank"] for r in section.data["rows"]] and section.tables[0].columns[2] == "Toy agreement pair ss"
    paths = write_report(Report("toys", (section,), {}, results=tuple(rows)), tmp_path / "out")
    assert len(json.loads(paths["results"].read_text())) == 3
