"""The Benchmark registry: every benchmark is one object, and adding one is one file.

The toy benchmark below is everything a new benchmark needs (the body of one module): it is
registered, then run through ``stereoset-eval report``, the study planner, the study analysis
and the study report without touching any other file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import pytest

from stereoset_eval.analysis.benchmarks import (
    BENCHMARKS,
    SOURCES,
    Benchmark,
    Evaluation,
    EvaluationOptions,
    Source,
    benchmark_for_source,
    get_benchmark,
    register,
)
from stereoset_eval.analysis.bootstrap import pair_ss_with_ci
from stereoset_eval.analysis.report_model import Section, Table, fmt_ci
from stereoset_eval.analysis.toy_items import pair_item
from stereoset_eval.cli.main import main
from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.foundation.items import Item


# --- the one file of a new benchmark ---------------------------------------------------------
class ToyPreference(Benchmark):
    name = "toy-preference"
    title = "Toy preference"
    description = "a toy pair benchmark: one JSON list of [id, bias type] rows"
    loader_family = "pairs"
    sources = (Source("toy-file", "a toy preference file"),)
    score_methods = {"pairs": {"masked": "crows-nangia", "causal": "causal-ll"}}
    own_methods = {"masked": "pll", "causal": "causal-ll"}

    def load(self, path):
        return [pair_item(i, bias_type=b, dimension=b) for i, b in json.loads(Path(path).read_text())]

    def evaluate(self, items: Sequence[Item], scores: Mapping[str, float], options: EvaluationOptions, *,
                 title: str | None = None) -> Evaluation:
        pss = pair_ss_with_ci(items, scores, ties=options.ties, config=options.bootstrap)
        return Evaluation(self, title or self.title, {"preference": pss}, headline=pss)

    def report_sections(self, evaluation: Evaluation, *, model: str) -> list[Section]:
        r = evaluation.parts["preference"]
        table = Table(f"{model}: preference", ("metric", "n", "value"), (("preference", str(r.n), fmt_ci(r.value, r.ci)),))
        return [Section(f"toy/{evaluation.title}/{model}", f"{evaluation.title}: {model}", tables=(table,),
                        data={"preference": r.to_dict()})]

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        return {f"{evaluation.title}/all": evaluation.parts["preference"].n}
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def toy(tmp_path):
    register(ToyPreference())
    rows = [[f"p{i}", "age" if i % 2 else "gender"] for i in range(12)]
    data = tmp_path / "toy.json"
    data.write_text(json.dumps(rows))
    scores = tmp_path / "scores.csv"
    scores.write_text("sentence_id,score\n" + "".join(
        f"p{i}:more,{-1.0 - (i % 3)}\np{i}:less,{-2.0 + (i % 2)}\n" for i in range(12)))
    yield data, scores
    BENCHMARKS.remove("toy-preference")


def test_unknown_benchmark_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match="crows-pairs.*pairs.*stereoset"):
        get_benchmark("stereosett")
    with pytest.raises(UnknownNameError, match="curated"):
        benchmark_for_source("curatd")


def test_the_built_in_benchmarks_answer_what_the_tables_held():
    st, cp, pairs = (get_benchmark(n) for n in ("stereoset", "crows-pairs", "pairs"))
    assert st.default_files == ("stereoset-dev", "stereoset-dev-ids-csv", "stereoset-dev-en", "stereoset-dev-jsonl")
    assert cp.default_files == ("crows-pairs",)
    assert list(SOURCES) == ["stereoset", "crows-pairs", "curated", "pairs", "bmne-stereoset", "bmne-crowspairs"]
    assert {s: benchmark_for_source(s).loader_family for s in SOURCES} == {
        "stereoset": "stereoset", "crows-pairs": "crows", "curated": "pairs", "pairs": "pairs",
        "bmne-stereoset": "pairs", "bmne-crowspairs": "pairs"}
    assert [get_benchmark(n).default_files for n in ("bmne-stereoset", "bmne-crowspairs")] == [
        ("bmne-stereoset",), ("bmne-crowspairs",)]
    assert [st.own_method(k) for k in ("masked", "causal")] == ["stereoset-mlm", "stereoset-causal"]
    assert [cp.own_method(k) for k in ("masked", "causal")] == ["crows-nangia", "causal-ll"]
    assert pairs.own_method("masked") is None
    assert st.score_methods["intersentence"] == {"masked": "stereoset-nsp", "causal": "stereoset-inter-causal"}
    assert pairs.score_methods["pairs"] == cp.score_methods["pairs"] == {"masked": "crows-nangia", "causal": "causal-ll"}


def test_a_registered_benchmark_runs_through_report(toy, tmp_path, capsys):
    data, scores = toy
    out = tmp_path / "report"
    assert main(["report", "--benchmark", "toy-preference", "--data", str(data), "--scores", str(scores),
                 "--out", str(out), "--model", "toy-model", "--bootstrap", "50"]) == 0
    doc = json.loads((out / "report.json").read_text())
    keys = [s["key"] for s in doc["sections"]]
    assert keys == ["results", "toy/Toy preference/toy-model", "distribution/Toy preference/bias_type",
                    "flags/Toy preference"]
    pref = doc["sections"][1]["data"]["preference"]
    assert pref["n"] == 12 and pref["ci"]["n_resamples"] == 50
    assert doc["provenance"]["n_per_slice"] == {"Toy preference/all": 12}


def test_a_registered_benchmark_runs_through_the_study(toy, tmp_path):
    from stereoset_eval.study.analyse import analyse
    from stereoset_eval.study.benchmarks import load_benchmarks
    from stereoset_eval.study.config import parse_config
    from stereoset_eval.study.executors import JobResult
    from stereoset_eval.study.plan import model_kinds, plan_jobs
    from stereoset_eval.study.report import build_study_report

    data, _ = toy
    config = parse_config({
        "models": [{"id": f"m{i}", "kind": "masked"} for i in range(3)],
        "benchmarks": [{"name": "Toy", "source": "toy-file", "data": str(data)},
                       {"name": "Toy again", "source": "toy-file", "data": str(data)}],
        "methods": {"masked": ["pll"]},
        "analysis": {"bootstrap": 30, "permutations": 0},
    })
    benchmarks = load_benchmarks(config)
    assert benchmarks["Toy"].benchmark.name == "toy-preference" and len(benchmarks["Toy"].items) == 12
    kinds = model_kinds(config)
    jobs = plan_jobs(config, kinds)
    assert {j.method for j in jobs} == {"pll"}  # its own method, asked of the registry, is pll too
    results = [JobResult(j, {f"p{i}:{r}": float((i + int(j.model.id[1:]) * (r == "more")) % 4)
                             for i in range(12) for r in ("more", "less")}, {}, {"hits": 0, "computed": 24}, 0.0)
               for j in jobs]
    analysis = analyse(results, benchmarks, config, kinds)
    cell = next(iter(analysis.protocols.values())).table4[("Toy", "Toy again", "pre")]
    assert cell.n == 3
    report = build_study_report(config, benchmarks, results, analysis, kinds, {"name": "test"}, {})
    details = [s for s in report.sections if s.key.startswith("detail/")]
    assert len(details) == 6 and all(s.title.startswith("Details — Toy") for s in details)


def test_the_registry_is_light_to_import():
    """Checking a study config asks the registry: that must not pull in numpy, matplotlib or torch."""
    import subprocess
    import sys

    code = ("import sys, stereoset_eval.study.config, stereoset_eval.analysis.benchmarks\n"
            "heavy = [m for m in ('numpy', 'matplotlib', 'torch') if m in sys.modules]\nassert not heavy, heavy\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
