"""``stereoset-eval demo`` as the README documents it offline: local data, the three fixture models.

The smoke test runs the packaged default study on a few items per benchmark through the
console script; the full test runs every item of the real data (with a lean method list, to
fit the test budget) and checks that the study's headline numbers are the reference goldens'.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stereoset_eval.cli.main import main
from conftest import load_golden

MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2")


def _cli(args: list[str], *, data_dir: Path) -> subprocess.CompletedProcess:
    script = shutil.which("stereoset-eval", path=str(Path(sys.executable).parent))
    cmd = [script] if script else [sys.executable, "-m", "stereoset_eval.cli.main"]
    env = {**os.environ, "STEREOSET_EVAL_DATA": str(data_dir), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    return subprocess.run(cmd + args, capture_output=True, text=True, env=env, timeout=900)


def _report(out: Path) -> dict:
    for name in ("report.json", "report.md", "report.html", "scores.csv", "study_scores.csv"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_demo_smoke_on_the_fixture_models(models_dir, data_dir, tmp_path):
    out = tmp_path / "demo"
    res = _cli(["demo", "--models", *(str(models_dir / m) for m in MODELS), "--limit", "3", "--no-download",
                "--output", str(out), "--cache-dir", str(tmp_path / "cache"), "--quiet"], data_dir=data_dir)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "wrote html" in res.stdout and "Spearman ρ between benchmarks across models" in res.stdout
    report = _report(out)
    keys = [s["key"] for s in report["sections"]]
    assert {"overview", "table4", "table5", "figure2", "scores/benchmark", "scores/pll", "scores/pll-word-l2r"} <= set(keys)
    assert sum(k.startswith("detail/") for k in keys) == 25  # 10 jobs per masked model, 5 for gpt2
    study = report["provenance"]["extra"]["study"]
    assert study["source"].startswith("package data/default_study.toml") and study["limit"] == 3
    assert [m["name"] for m in study["models"]] == list(MODELS)
    # the BMNE release is not in the offline data folder: skipped with a visible note, not a crash
    overview = next(s for s in report["sections"] if s["key"] == "overview")
    assert [n.split(":")[0] for n in overview["notes"] if n.startswith("SKIPPED")] == [
        "SKIPPED benchmark BMNE-StereoSet", "SKIPPED benchmark BMNE-CrowS"]
    assert [b for b in study["skipped"]][0][0] == "BMNE-StereoSet"


def test_demo_with_an_unknown_model_is_a_one_line_error(tmp_path, capsys, data_dir):
    rc = main(["demo", "--models", str(tmp_path / "no-such-model"), "--data-dir", str(data_dir), "--no-download",
               "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: model ") and "no-such-model" in err
    assert not (tmp_path / "out").exists()


LEAN_STUDY = """
[study]
title = "Fixture models on the full real data"
[[models]]
id = "{models}/tiny-bert"
[[models]]
id = "{models}/tiny-roberta"
[[models]]
id = "{models}/tiny-gpt2"
[[benchmarks]]
name = "StereoSet"
source = "stereoset"
[[benchmarks]]
name = "CrowS-Pairs"
source = "crows-pairs"
[[benchmarks]]
name = "curated-StereoSet"
source = "curated"
from = "StereoSet"
methods = {{ masked = ["pll"], causal = ["causal-ll"] }}
[[benchmarks]]
name = "curated-CrowS"
source = "curated"
from = "CrowS-Pairs"
methods = {{ masked = ["pll"], causal = ["causal-ll"] }}
[methods]
benchmark_methods = true
[protocols]
benchmark = {{ masked = "benchmark", causal = "benchmark" }}
pll = {{ masked = "pll", causal = "causal-ll" }}
[analysis]
bootstrap = 200
compare = [["CrowS-Pairs", "StereoSet"], ["curated-CrowS", "curated-StereoSet"]]
"""


@pytest.mark.slow
def test_demo_on_the_full_real_data_reproduces_the_goldens(models_dir, data_dir, golden_dir, tmp_path):
    """Every item of StereoSet (intrasentence) and CrowS-Pairs, and the curated pairs of both."""
    config = tmp_path / "study.toml"
    config.write_text(LEAN_STUDY.format(models=models_dir), encoding="utf-8")
    out = tmp_path / "full"
    res = _cli(["demo", "--config", str(config), "--no-download", "--output", str(out),
                "--cache-dir", str(tmp_path / "cache"), "--quiet"], data_dir=data_dir)
    assert res.returncode == 0, res.stderr[-2000:]
    report = _report(out)
    sections = {s["key"]: s for s in report["sections"]}
    counts = report["provenance"]["extra"]["benchmarks"]
    assert counts["StereoSet"]["counts"]["scored"] == 2106 and counts["CrowS-Pairs"]["counts"]["scored"] == 1508
    # curation rules 2.0 keep about what the BMNE release keeps (223 StereoSet / 186 CrowS-Pairs pairs)
    assert 150 < counts["curated-StereoSet"]["counts"]["scored"] < 300 and 150 < counts["curated-CrowS"]["counts"]["scored"] < 300
    assert report["provenance"]["extra"]["study"]["limit"] is None

    def own(model: str) -> dict:
        return {r["benchmark"]: r for r in sections["scores/benchmark"]["data"]["scores"]
                if r["model"] == model and r["category"] == "all"}

    # the study's headline numbers are the original reference code's (shared/fixtures/golden)
    g1 = load_golden(golden_dir, "g1_crows_metric__tiny-bert.json")
    g2 = load_golden(golden_dir, "g2_stereoset_intrasentence_mlm__tiny-bert.json")
    g3 = load_golden(golden_dir, "g3_stereoset_intrasentence_causal__tiny-gpt2.json")
    assert own("tiny-bert")["CrowS-Pairs"]["value"] == pytest.approx(g1["summary"]["metric_score"], abs=1e-9)
    ss_bert = g2["score_evaluator_results"]["intrasentence"]["overall"]["SS Score"]
    ss_gpt2 = g3["score_evaluator_results_all"]["intrasentence"]["overall"]["SS Score"]
    assert own("tiny-bert")["StereoSet"]["value"] == pytest.approx(ss_bert, abs=1e-9)
    assert own("tiny-gpt2")["StereoSet"]["value"] == pytest.approx(ss_gpt2, abs=1e-9)
    table6 = sections["table6/pll/curated-CrowS-vs-curated-StereoSet"]
    assert [r["model"] for r in table6["data"]["rows"]] == list(MODELS)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.count('<img src="data:image/png;base64,') == sum(len(s["figures"]) for s in report["sections"])
