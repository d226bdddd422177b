"""The BMNE release in a study: the fixture (release schema) fetched through the release's code path,
scored by the three fixture models, reported as Tables 4–6 and Figure 2 with the release's tags;
and the default study skipping the release, with a note, when it is unavailable."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

import stereoset_eval.curation.loaders.download as dl
from stereoset_eval.foundation.files import file_sha256
from stereoset_eval.study import parse_config, run_study
from stereoset_eval.study.benchmarks import drop_unavailable
from stereoset_eval.study.config import default_config
from stereoset_eval.study.executors import LocalExecutor

FIXTURE = Path(__file__).parent / "fixtures" / "bmne"
MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2")
DIMENSIONS = {"Personality Traits", "Attitudes and Beliefs", "Roles and Behaviors", "Physical Characteristics"}


def _sections(doc: dict) -> dict[str, dict]:
    return {s["key"]: s for s in doc["sections"]}


@pytest.fixture(scope="module")
def release_run(models_dir, tmp_path_factory):
    """A study on the fixture, fetched as the release is: hf_hub_download / datasets.load_dataset faked."""
    import datasets
    import huggingface_hub

    tmp = tmp_path_factory.mktemp("bmne-study")
    mp = pytest.MonkeyPatch()
    mp.setattr(huggingface_hub, "hf_hub_download", lambda repo_id, filename, **kw: str(FIXTURE / filename))
    mp.setattr(datasets, "load_dataset",
               lambda repo, config, **kw: datasets.Dataset.from_csv(str(FIXTURE / f"{config}_subset.csv")))
    mp.setitem(dl.manifest()["bmne-stereoset"], "sha256", file_sha256(FIXTURE / "stereoset_subset.csv"))
    config = parse_config({
        "study": {"title": "BMNE release fixture", "output": str(tmp / "out"), "cache_dir": str(tmp / "cache")},
        "data": {"dir": str(tmp / "data"), "download": True},
        "models": [{"id": str(models_dir / m)} for m in MODELS],
        "benchmarks": [{"name": "BMNE-StereoSet", "source": "bmne-stereoset"},
                       {"name": "BMNE-CrowS", "source": "bmne-crowspairs"}],
        "methods": {"masked": ["pll", "pll-word-l2r"], "causal": ["causal-ll"], "benchmark_methods": True},
        "protocols": {"pll": {"masked": "pll", "causal": "causal-ll"},
                      "pll-word-l2r": {"masked": "pll-word-l2r", "causal": "causal-ll"}},
        "analysis": {"bootstrap": 100, "compare": [["BMNE-CrowS", "BMNE-StereoSet"]]},
    }, source="test")
    try:
        run = run_study(config, executor=LocalExecutor())
    finally:
        mp.undo()
    return run, tmp


@pytest.mark.slow
def test_release_fixture_flows_to_tables_4_to_6(release_run):
    run, tmp = release_run
    doc = json.loads(run.paths["json"].read_text(encoding="utf-8"))
    sec = _sections(doc)
    # fetched into the data directory, verified, recorded
    ss_file, cp_file = tmp / "data" / "bmne" / "stereoset_subset.csv", tmp / "data" / "bmne" / "crowspairs_subset.csv"
    assert ss_file.read_bytes() == (FIXTURE / "stereoset_subset.csv").read_bytes()
    assert dl.recorded(cp_file)["sha256"] == file_sha256(cp_file)
    bench = doc["provenance"]["extra"]["benchmarks"]
    assert bench["BMNE-StereoSet"]["files"] == [{"path": str(ss_file), "sha256": file_sha256(ss_file)}]
    assert bench["BMNE-StereoSet"]["source"] == "bmne-stereoset" and bench["BMNE-CrowS"]["counts"]["scored"] == 8
    assert bench["BMNE-StereoSet"]["counts"]["untagged"] == 0
    # Table 4: both protocols, pre and post
    rows = sec["table4"]["tables"][0]["rows"]
    assert [r[:2] for r in rows] == [["pll", "BMNE-CrowS vs BMNE-StereoSet"],
                                     ["pll-word-l2r", "BMNE-CrowS vs BMNE-StereoSet"]]
    assert set(sec["table4"]["data"]["pll"]["BMNE-CrowS vs BMNE-StereoSet"]) == {"pre", "post"}
    # Table 5: the release's (fixture's) own categories, not re-tagged ones
    assert set(sec["table5"]["data"]["pll"]["BMNE-CrowS vs BMNE-StereoSet"]) == DIMENSIONS
    # Table 6 per protocol, one row per model
    for proto in ("pll", "pll-word-l2r"):
        t6 = sec[f"table6/{proto}/BMNE-CrowS-vs-BMNE-StereoSet"]
        assert [r["model"] for r in t6["data"]["rows"]] == list(MODELS)
    # Figure 2 counts are the fixture's category column
    for name, file in (("BMNE-StereoSet", "stereoset_subset.csv"), ("BMNE-CrowS", "crowspairs_subset.csv")):
        with open(FIXTURE / file, newline="", encoding="utf-8") as fh:
            expected = Counter(r["category"] for r in csv.DictReader(fh))
        assert sec["figure2"]["data"]["counts"][name] == dict(expected)


@pytest.mark.slow
def test_balanced_ss_uses_the_release_categories(release_run):
    """post = mean over the release's categories of each category's pair ss, from scores.csv alone."""
    run, _ = release_run
    scores: dict[tuple[str, str, str], dict[str, float]] = {}
    with open(run.paths["scores"], newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            scores.setdefault((r["model"], r["benchmark"], r["method"]), {})[r["sentence_id"]] = float(r["score"])
    with open(run.paths["study_scores"], newline="", encoding="utf-8") as fh:
        table = {(r["protocol"], r["model"], r["benchmark"], r["stage"], r["category"]): float(r["value"])
                 for r in csv.DictReader(fh)}
    items = run.benchmarks["BMNE-StereoSet"].items
    with open(FIXTURE / "stereoset_subset.csv", newline="", encoding="utf-8") as fh:
        category = {f"bmne-stereoset:{n}": r["category"] for n, r in enumerate(csv.DictReader(fh), start=1)}
    s = scores[("tiny-bert", "BMNE-StereoSet", "pll-word-l2r")]
    wins = {i.id: s[f"{i.id}:more"] > s[f"{i.id}:less"] for i in items}
    groups = sorted(set(category.values()))
    per = {g: 100.0 * sum(wins[i] for i in wins if category[i] == g) / sum(category[i] == g for i in wins) for g in groups}
    assert table[("pll-word-l2r", "tiny-bert", "BMNE-StereoSet", "post", "all")] == pytest.approx(
        sum(per.values()) / len(per), abs=1e-9)
    assert table[("pll-word-l2r", "tiny-bert", "BMNE-StereoSet", "pre", "all")] == pytest.approx(
        100.0 * sum(wins.values()) / len(wins), abs=1e-9)


@pytest.mark.slow
def test_tables_command_on_the_study_scores_matches_the_report(release_run, capsys):
    """``stereoset-eval tables`` on the study's own study_scores.csv gives the report's Table 4 ρ."""
    from stereoset_eval.cli.main import main

    run, tmp = release_run
    out = tmp / "tables.json"
    assert main(["tables", "--scores", str(run.paths["study_scores"]), "--json", str(out)]) == 0
    mine = json.loads(out.read_text(encoding="utf-8"))["protocols"]
    report = _sections(json.loads(run.paths["json"].read_text(encoding="utf-8")))["table4"]["data"]
    for proto in ("pll", "pll-word-l2r"):
        for stage in ("pre", "post"):
            theirs = report[proto]["BMNE-CrowS vs BMNE-StereoSet"][stage]["correlation"]
            cell = mine[proto]["BMNE-StereoSet vs BMNE-CrowS"][stage]
            if theirs is None:  # three tiny models can tie: undefined in both
                assert "reason" in cell
            else:
                assert cell["rho"] == pytest.approx(theirs["rho"], abs=1e-12)
                assert cell["permutation_exact"] and cell["permutation_p_value"] == pytest.approx(
                    theirs["permutation_p_value"], abs=1e-12)


def test_default_study_compares_originals_release_and_curation():
    c = default_config()
    assert [(b.name, b.source) for b in c.benchmarks] == [
        ("StereoSet", "stereoset"), ("CrowS-Pairs", "crows-pairs"),
        ("BMNE-StereoSet", "bmne-stereoset"), ("BMNE-CrowS", "bmne-crowspairs"),
        ("curated-StereoSet", "curated"), ("curated-CrowS", "curated"),
    ]
    assert [b.name for b in c.benchmarks if b.optional] == ["BMNE-StereoSet", "BMNE-CrowS"]
    assert c.analysis.compare == (("CrowS-Pairs", "StereoSet"), ("BMNE-CrowS", "BMNE-StereoSet"),
                                  ("curated-CrowS", "curated-StereoSet"))


def test_default_study_skips_the_absent_release_with_a_note(data_dir):
    c = default_config().replace(data_dir=str(data_dir), download=False)
    kept = drop_unavailable(c)
    assert [b.name for b in kept.benchmarks] == ["StereoSet", "CrowS-Pairs", "curated-StereoSet", "curated-CrowS"]
    assert [n for n, _ in kept.skipped] == ["BMNE-StereoSet", "BMNE-CrowS"]
    assert "bmne-stereoset" in kept.skipped[0][1] and "not found" in kept.skipped[0][1]
    assert kept.analysis.compare == (("CrowS-Pairs", "StereoSet"), ("curated-CrowS", "curated-StereoSet"))
    assert kept.to_dict()["skipped"][0][0] == "BMNE-StereoSet"  # recorded in the report's provenance


def test_a_required_release_benchmark_fails_clearly(tmp_path):
    from stereoset_eval.study.benchmarks import BenchmarkDataError, load_benchmarks

    c = parse_config({"study": {"output": str(tmp_path / "o")}, "data": {"dir": str(tmp_path), "download": False},
                      "models": [{"id": "m"}], "benchmarks": [{"name": "BMNE-StereoSet", "source": "bmne-stereoset"}]},
                     source="t")
    assert drop_unavailable(c) is c  # not optional: never skipped
    with pytest.raises(BenchmarkDataError, match="BMNE-StereoSet.*bmne-stereoset"):
        load_benchmarks(c)
