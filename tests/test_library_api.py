"""The library API the command line calls (issue 32): ``stereoset_eval.evaluate`` returns typed results equal to
``score`` + ``report``; the CLI's defaults are the dataclasses'; one flag name per option (``report --out`` an
alias); the BMNE release in ``inventory``, ``score``, ``report`` and ``evaluate`` (issue 34), offline with the
study's message. The model is the deterministic fake model (nothing to load): these tests are about the
plumbing, the goldens check the numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import stereoset_eval
import stereoset_eval.curation.loaders.download as dl
from stereoset_eval.cli.main import build_parser, main
from stereoset_eval.foundation.files import file_sha256

FIXTURES = Path(__file__).parent / "fixtures"
CROWS = FIXTURES / "curation_small_crows.csv"
BMNE = FIXTURES / "bmne"
MODEL = "fake:masked"


def _rows(path: Path) -> list[dict]:
    return [{k: v for k, v in r.items()} for r in json.loads(path.read_text(encoding="utf-8"))]


def test_evaluate_returns_typed_results_equal_to_score_then_report(tmp_path, capsys):
    from stereoset_eval.analysis.results import HeadlineResult

    result = stereoset_eval.evaluate(MODEL, benchmarks=["crows-pairs"], limit=4, output=tmp_path / "ev",
                                     cache_dir=tmp_path / "c", data_dir=tmp_path / "no-data")  # bundled file
    assert isinstance(result, stereoset_eval.EvaluationResult) and list(result.runs) == ["crows-pairs"]
    assert result.rows and all(isinstance(r, HeadlineResult) for r in result.rows)
    assert json.loads(result.results_path.read_text(encoding="utf-8")) == json.loads(
        (tmp_path / "ev" / "crows-pairs" / "report" / "results.json").read_text(encoding="utf-8"))
    assert result.value("CrowS-Pairs", result.rows[0].metric) == result.rows[0].value
    assert "LIMITED RUN (first 4 items" in result.table()
    # the same run through the command line: score writes the report defaults' results.json
    assert main(["score", "--model", MODEL, "--benchmark", "crows-pairs", "--limit", "4", "--data-dir",
                 str(tmp_path / "no-data"), "--output", str(tmp_path / "s"), "--cache-dir", str(tmp_path / "c"),
                 "--no-progress"]) == 0
    assert _rows(tmp_path / "s" / "results.json") == _rows(result.results_path)
    assert "cache hits 8, computed 0" in capsys.readouterr().err  # evaluate's scores, from the cache


def test_cli_defaults_are_the_dataclass_defaults():
    from stereoset_eval.cli.commands import report, score
    from stereoset_eval.study.report_run import ReportOptions, ReportRequest
    from stereoset_eval.study.score_run import ScoreRequest

    parser = build_parser()
    args = parser.parse_args(["score", "--model", MODEL, "--benchmark", "crows-pairs", "--output", "o"])
    assert score.request(args) == ScoreRequest(model=MODEL, benchmark="crows-pairs", output=Path("o"))
    args = parser.parse_args(["report", "--benchmark", "crows-pairs", "--scores", "s.json", "--out", "r"])
    assert report.request(args) == ReportRequest(benchmark="crows-pairs", scores=Path("s.json"), output=Path("r"))
    assert report.request(args).options == ReportOptions()
    same = parser.parse_args(["report", "--benchmark", "crows-pairs", "--scores", "s.json", "--output", "r"])
    assert report.request(same) == report.request(args)  # --out is --output's old name
    no_round = parser.parse_args(["report", "--benchmark", "crows-pairs", "--scores", "s", "--out", "r", "--no-rounding"])
    assert report.request(no_round).options.ndigits is None


def test_commands_share_one_flag_name_per_option():
    from stereoset_eval.cli.reference import subcommands

    commands = subcommands(build_parser())
    flags = {name: {o for a in p._actions for o in a.option_strings} for name, p in commands.items()}
    for name in ("score", "report", "evaluate", "study", "demo"):
        assert "--output" in flags[name], name
    assert "--benchmark" in flags["evaluate"] and "--out" in flags["report"]  # the other commands' / older spellings
    for name in ("score", "evaluate", "study", "demo"):
        assert {"--limit", "--cache-dir", "--no-cache", "--no-progress", "--overwrite", "--no-download"} <= flags[name]


def test_import_stays_light_and_the_api_loads_on_first_use():
    code = ("import sys, stereoset_eval; assert 'numpy' not in sys.modules and 'torch' not in sys.modules; "
            "print(stereoset_eval.evaluate.__module__, stereoset_eval.run_study.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["stereoset_eval.study.evaluate_api", "stereoset_eval.study.run"]


def test_bmne_release_in_inventory_score_report_and_evaluate(tmp_path, capsys, monkeypatch):
    data = tmp_path / "data" / "bmne"
    data.mkdir(parents=True)
    (data / "stereoset_subset.csv").write_bytes((BMNE / "stereoset_subset.csv").read_bytes())
    monkeypatch.setitem(dl.manifest()["bmne-stereoset"], "sha256", file_sha256(BMNE / "stereoset_subset.csv"))
    common = ["--benchmark", "bmne-stereoset", "--data-dir", str(tmp_path / "data"), "--no-download"]
    assert main(["inventory", *common]) == 0
    assert "10 items from" in capsys.readouterr().out
    assert main(["score", *common, "--model", MODEL, "--output", str(tmp_path / "s"), "--no-cache",
                 "--no-progress"]) == 0
    assert main(["report", *common, "--scores", str(tmp_path / "s" / "scores.json"), "--output",
                 str(tmp_path / "r"), "--bootstrap", "20"]) == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    assert report["provenance"]["data_files"][0]["path"].endswith("bmne/stereoset_subset.csv")
    capsys.readouterr()
    assert main(["evaluate", "--model", MODEL, "--benchmarks", "bmne-stereoset", "--data-dir", str(tmp_path / "data"),
                 "--no-download", "--output", str(tmp_path / "ev"), "--no-cache", "--no-progress"]) == 0
    rows = json.loads((tmp_path / "ev" / "results.json").read_text(encoding="utf-8"))
    assert {r["benchmark"] for r in rows} == {"BMNE release (StereoSet subset)"} and all(r["n"] == 10 for r in rows)
    assert "BMNE release (StereoSet subset)" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["inventory", "score", "report", "evaluate"])
def test_bmne_release_offline_gives_the_studys_message(command, tmp_path, capsys):
    from stereoset_eval.study.benchmarks import BenchmarkDataError, resolve_file
    from stereoset_eval.study.config_model import BenchmarkSpec

    with pytest.raises(BenchmarkDataError) as study:
        resolve_file(BenchmarkSpec(name="bmne-crowspairs", source="bmne-crowspairs"), data_dir=str(tmp_path),
                     download=False)
    where = ["--data-dir", str(tmp_path), "--no-download"]
    argv = {"inventory": ["--benchmark", "bmne-crowspairs", *where],
            "score": ["--benchmark", "bmne-crowspairs", "--model", MODEL, "--output", str(tmp_path / "o"), *where],
            "report": ["--benchmark", "bmne-crowspairs", "--scores", str(tmp_path / "s.json"),
                       "--output", str(tmp_path / "o"), *where],
            "evaluate": ["--model", MODEL, "--benchmarks", "bmne-crowspairs", "--output", str(tmp_path / "o"), *where]}
    assert main([command, *argv[command]]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {study.value}\n" and "downloading is disabled" in err  # one line, the study's words


def test_evaluate_methods_and_report_options_reach_the_files(tmp_path):
    result = stereoset_eval.evaluate(MODEL, benchmarks=["crows-pairs"], methods={"crows-pairs": "pll"}, limit=2,
                                     output=tmp_path / "ev", use_cache=False,
                                     report=stereoset_eval.ReportOptions(bootstrap=20, seed=7))
    assert {r.method for r in result.rows} == {"pll"}
    run = result.runs["crows-pairs"]
    assert run.scores.provenance["runs"]["pairs"]["method"]["name"] == "pll"
    prov = json.loads(run.report.paths["json"].read_text(encoding="utf-8"))["provenance"]
    assert prov["options"]["bootstrap"]["n_resamples"] == 20 and prov["options"]["bootstrap"]["seed"] == 7
    with pytest.raises(KeyError, match="no 'lms' row for 'CrowS-Pairs'"):
        result.value("CrowS-Pairs", "lms")
