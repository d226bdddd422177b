"""Run folders, limited runs, progress and the one-shot ``evaluate`` on the fixture models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoset_eval.cli.commands._runs import limited_folder
from stereoset_eval.cli.main import main

STUDY = """
[study]
title = "tiny study"
output = "{output}"
[[models]]
id = "{model}"
name = "tiny-bert"
[[benchmarks]]
name = "StereoSet"
source = "stereoset"
[[benchmarks]]
name = "CrowS-Pairs"
source = "crows-pairs"
[methods]
masked = []
causal = []
[analysis]
bootstrap = 20
"""


@pytest.fixture
def study_file(tmp_path, models_dir):
    path = tmp_path / "study" / "tiny.toml"
    path.parent.mkdir()
    path.write_text(STUDY.format(output="out", model=models_dir / "tiny-bert"), encoding="utf-8")
    return path


def _study(args, capsys):
    rc = main(["study", *args])
    return rc, capsys.readouterr()


def test_limited_folder():
    assert limited_folder("runs/demo", 50) == "runs/demo-limit-50" and limited_folder("runs/demo", None) == "runs/demo"


def test_study_output_is_relative_to_the_study_file_and_prints_results(study_file, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, cap = _study([str(study_file), "--limit", "3", "--cache-dir", str(tmp_path / "c"), "--no-progress"], capsys)
    assert rc == 0, cap.err
    out = study_file.parent / "out-limit-3"  # beside the study file, not in the working directory
    assert (out / "report.json").is_file() and not (tmp_path / "out-limit-3").exists()
    rows = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {(r["benchmark"], r["metric"]) for r in rows} >= {("StereoSet intrasentence", "ss"), ("CrowS-Pairs", "metric score")}
    assert "| tiny-bert" in cap.out and "ss / metric (ideal 50)" in cap.out
    assert "Spearman ρ between benchmarks" not in cap.out and "needs at least 3 models" in cap.out
    assert "Leaderboard" not in cap.out  # one model: nothing to rank
    assert "scoring 2 jobs" in cap.err and "%|" not in cap.err  # --no-progress: no bar


def test_limit_goes_to_its_own_folder_and_is_marked(study_file, tmp_path, capsys):
    rc, cap = _study([str(study_file), "--limit", "2", "--cache-dir", str(tmp_path / "c")], capsys)
    assert rc == 0, cap.err
    out = study_file.parent / "out-limit-2"
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    titles = [t["title"] for s in report["sections"] for t in s["tables"]]
    assert titles and all(t.startswith("LIMITED RUN (first 2 items") for t in titles)
    assert cap.out.count("LIMITED RUN") >= 1 and not (study_file.parent / "out").exists()
    assert "job 1/2: tiny-bert | StereoSet" in cap.err and "sent/s" in cap.err  # a bar per job


def test_a_different_run_is_not_overwritten(study_file, tmp_path, capsys, models_dir):
    out = tmp_path / "shared-out"
    base = [str(study_file), "--limit", "2", "--output", str(out), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    assert _study(base, capsys)[0] == 0
    before = (out / "report.json").read_bytes()
    assert _study(base, capsys)[0] == 0  # the same run again: replaced
    rc, cap = _study(base[:2] + ["3"] + base[3:], capsys)  # --limit 3 into the --limit 2 folder
    assert rc == 2 and "holds a different `study` run (differs in limit)" in cap.err
    assert json.loads((out / "report.json").read_bytes())["provenance"]["extra"]["study"]["limit"] == 2
    assert len(before) > 0
    rc, cap = _study(base[:2] + ["3"] + base[3:] + ["--overwrite"], capsys)
    assert rc == 0, cap.err


def test_score_limit_table_and_guard(tmp_path, capsys, models_dir):
    out = tmp_path / "scores"
    args = ["score", "--benchmark", "crows-pairs", "--model", str(models_dir / "tiny-gpt2"), "--limit", "4",
            "--output", str(out), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    assert main(args) == 0
    cap = capsys.readouterr()
    assert "LIMITED RUN (first 4 items" in cap.out and "CrowS-Pairs" in cap.out
    assert json.loads((out / "provenance.json").read_text(encoding="utf-8"))["command"]["limit"] == 4
    from stereoset_eval.foundation.score_file import read_scores

    assert len(read_scores(out / "scores.json").scores) == 8  # 4 pairs, 2 sentences each
    assert main(args[:-3] + ["--method", "causal-ll"] + args[-3:]) == 2  # another method into the same folder
    assert "holds a different `score` run (differs in method)" in capsys.readouterr().err
    # report on the limited scores uses the same first 4 pairs
    assert main(["report", "--benchmark", "crows-pairs", "--scores", str(out / "scores.json"), "--out",
                 str(tmp_path / "r"), "--bootstrap", "20"]) == 0
    rows = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert rows[0]["n"] == 4 and rows[0]["limit"] == 4


def test_evaluate_scores_and_reports_both_benchmarks(tmp_path, capsys, models_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STEREOSET_EVAL_DATA", raising=False)  # the bundled data only
    rc = main(["evaluate", "--model", str(models_dir / "tiny-gpt2"), "--limit", "3", "--cache-dir",
               str(tmp_path / "c"), "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    out = Path("runs/evaluate/tiny-gpt2-limit-3")
    for bench in ("stereoset", "crows-pairs"):
        assert (out / bench / "report" / "report.html").is_file() and (out / bench / "scores" / "scores.json").is_file()
    rows = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert {r["benchmark"] for r in rows} == {"StereoSet intrasentence", "StereoSet intersentence",
                                             "StereoSet intra+inter overall", "CrowS-Pairs"}
    assert {r["metric"] for r in rows if r["benchmark"].startswith("StereoSet")} == {"lms", "ss", "icat"}
    assert all(r["limit"] == 3 and r["ci_low"] is not None for r in rows)
    assert "LIMITED RUN (first 3 items" in cap.out and "| tiny-gpt2" in cap.out
    data_files = json.loads((out / "stereoset" / "report" / "report.json").read_text())["provenance"]["data_files"]
    assert data_files[0]["path"].endswith("bundled/stereoset_dev_en.csv")


def test_a_rerun_that_skips_the_same_optional_benchmark_is_the_same_run(tmp_path, capsys, models_dir):
    """The identity is the study as given: an optional benchmark skipped on both runs changes nothing
    (the folder's identity once held the resolved config, so `make demo` offline refused its own rerun)."""
    study = tmp_path / "opt.toml"
    study.write_text(STUDY.format(output="out", model=models_dir / "tiny-bert")
                     + '[[benchmarks]]\nname = "BMNE-StereoSet"\nsource = "bmne-stereoset"\noptional = true\n'
                       'data = "missing/stereoset_subset.csv"\n', encoding="utf-8")
    base = [str(study), "--limit", "2", "--cache-dir", str(tmp_path / "c"), "--no-progress", "--no-download"]
    rc, cap = _study(base, capsys)
    assert rc == 0, cap.err
    assert "skipped benchmark BMNE-StereoSet" in cap.err
    rc, cap = _study(base, capsys)
    assert rc == 0, cap.err


def test_score_results_json_is_part_of_the_set_and_survives_a_failed_rerun(tmp_path, capsys, models_dir,
                                                                              monkeypatch):
    from stereoset_eval.foundation.outputs import MARKER

    out = tmp_path / "scores"
    args = ["score", "--benchmark", "crows-pairs", "--model", str(models_dir / "tiny-gpt2"), "--limit", "3",
            "--output", str(out), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    assert main(args) == 0
    capsys.readouterr()
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    assert "results.json" in marker["files"] and marker["identity"]["limit"] == 3
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(*_a, **_k):
        raise OSError(28, "No space left on device")

    import stereoset_eval.study.score_run as score_run_mod

    monkeypatch.setattr(score_run_mod, "write_results", broken)  # the rerun fails while writing its set
    assert main(args) == 2
    assert "writing the new set failed" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # the old set, results.json included


def test_an_output_without_a_run_identity_is_refused_unless_overwrite(tmp_path, capsys, models_dir):
    """A folder an older version wrote (its marker names the command, not the run) is never taken for this run."""
    from stereoset_eval.foundation.outputs import MARKER

    out = tmp_path / "old"
    out.mkdir()
    (out / "scores.json").write_text("{}", encoding="utf-8")
    (out / MARKER).write_text(json.dumps({"command": "score", "files": ["scores.json"], "tool": "stereoset-eval"}))
    args = ["score", "--benchmark", "crows-pairs", "--model", str(models_dir / "tiny-gpt2"), "--limit", "2",
            "--output", str(out), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    assert main(args) == 2
    assert "records no run identity" in capsys.readouterr().err
    assert main(args + ["--overwrite"]) == 0
