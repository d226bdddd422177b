"""The deterministic fake model (stereoset_eval.scoring.fake): same inputs, same numbers, anywhere."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from stereoset_eval.scoring.api import score_items
from stereoset_eval.scoring.fake import FAKE_VERSION, fake_logprob
from stereoset_eval.scoring.records import ScoringError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def crows(crows_csv):
    from stereoset_eval.curation.loaders.registry import load_items

    return load_items("crows-pairs", crows_csv)[:12]


@pytest.fixture(scope="module")
def stereoset(ids_csv):
    from stereoset_eval.curation.loaders.registry import load_items

    items = load_items("stereoset", ids_csv)
    return {task: [i for i in items if i.task == task][:6] for task in ("intrasentence", "intersentence")}


def _numbers(ss) -> list:
    return [r.to_dict() for r in ss.records]


def test_the_rule_is_pinned():
    """The values are part of the fake's contract (the cache keys them by FAKE_VERSION): pinned here."""
    assert FAKE_VERSION == "stereoset-eval fake model v1"
    assert fake_logprob("masked", [2, 10, 3], None, 1, 10) == -1.3195967529290968
    assert fake_logprob("causal", [0, 10, 11], None, 2, 12) == -0.23321357674946103


def test_log_probabilities_follow_the_model_kind():
    lp = fake_logprob("masked", [2, 10, 3], None, 1, 10)
    assert -7.0 < lp < 0.0 and lp != fake_logprob("masked", [2, 11, 3], None, 1, 10)
    assert lp != fake_logprob("masked", [2, 10, 3], None, 1, 11)
    # causal: position i sees only tokens 0..i, as causal attention does
    assert fake_logprob("causal", [5, 6, 7], None, 1, 9) == fake_logprob("causal", [5, 6, 8, 8], None, 1, 9)
    assert fake_logprob("masked", [5, 6, 7], None, 1, 9) != fake_logprob("masked", [5, 6, 8], None, 1, 9)
    # nsp: IsNext and NotNext add up to one and depend on the segment ids
    p = [math.exp(fake_logprob("nsp", [2, 10, 3, 11, 3], [0, 0, 0, 1, 1], 0, t)) for t in (0, 1)]
    assert sum(p) == pytest.approx(1.0, abs=1e-12)
    assert fake_logprob("nsp", [2, 10, 3, 11, 3], [0, 0, 0, 0, 0], 0, 0) != math.log(p[0])


def test_every_method_runs_and_repeats_exactly(crows, stereoset):
    runs = [("fake:masked", m, crows) for m in ("crows-nangia", "pll", "pll-word-l2r")] + [
        ("fake:causal", "causal-ll", crows),
        ("fake:masked", "stereoset-mlm", stereoset["intrasentence"]),
        ("fake:masked", "stereoset-nsp", stereoset["intersentence"]),
        ("fake:causal", "stereoset-causal", stereoset["intrasentence"]),
        ("fake:causal", "stereoset-inter-causal", stereoset["intersentence"]),
    ]
    for model, method, items in runs:
        first = score_items(items, model=model, method=method, use_cache=False)
        again = score_items(items, model=model, method=method, use_cache=False, batch_tokens=16)
        assert _numbers(first) == _numbers(again), method  # exactly, whatever the batching
        values = list(first.scores.values())
        assert len(values) == sum(len(i.sentences) for i in items) and all(math.isfinite(v) for v in values)
        assert len(set(values)) > len(values) // 2, method  # not a constant
        assert first.provenance["model"]["id"] == model and first.provenance["model"]["n_parameters"] == 0


def test_same_numbers_in_a_fresh_process(crows):
    code = ("import json, sys\n"
            "from stereoset_eval.curation.loaders.registry import load_items\n"
            "from stereoset_eval.scoring.api import score_items\n"
            "items = load_items('crows-pairs', sys.argv[1])[:12]\n"
            "print(json.dumps(score_items(items, model='fake:masked', method='pll', use_cache=False).scores))\n")
    path = crows[0].provenance.source_file
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": ""})
    here = score_items(crows, model="fake:masked", method="pll", use_cache=False).scores
    assert json.loads(out.stdout.strip().splitlines()[-1]) == here


def test_the_cache_serves_fake_scores(crows, tmp_path):
    first = score_items(crows, model="fake:masked", method="crows-nangia", cache_dir=tmp_path)
    again = score_items(crows, model="fake:masked", method="crows-nangia", cache_dir=tmp_path)
    assert first.cache_stats["computed"] == 24 and again.cache_stats == {"hits": 24, "computed": 0}
    assert _numbers(first) == _numbers(again)
    other = score_items(crows, model="fake:causal", method="causal-ll", cache_dir=tmp_path)
    assert other.cache_stats["hits"] == 0


@pytest.mark.parametrize("model, method, message", [
    ("fake:causal", "crows-nangia", "'fake:causal' holds a causal language model, but this method needs a masked"),
    ("fake:masked", "causal-ll", "'fake:masked' holds a masked language model, but this method needs a causal"),
    ("fake:nsp", "pll", "unknown fake model 'fake:nsp'; use fake:masked or fake:causal"),
])
def test_wrong_kind_is_one_line(crows, model, method, message):
    with pytest.raises(ScoringError) as info:
        score_items(crows, model=model, method=method, use_cache=False)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_kind_detection_knows_the_fake_models():
    from stereoset_eval.scoring.model_info import detect_model_kind, model_kinds_available
    from stereoset_eval.study.config import ModelSpec
    from stereoset_eval.study.plan import model_kind

    assert model_kinds_available("fake:masked") == {"masked": True, "causal": False, "nsp": True}
    assert detect_model_kind("fake:causal") == "causal"
    assert model_kind(ModelSpec("fake:masked", "m")) == "masked"


def test_score_command_on_the_fake_models(ids_csv, tmp_path):
    import csv

    from stereoset_eval.cli.main import main

    with open(ids_csv, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    keep = [r for task in ("intrasentence", "intersentence")
            for r in [r for r in rows[1:] if r[0] == task][:9]]  # three examples per task
    subset = tmp_path / "subset.csv"
    with open(subset, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([rows[0]] + keep)
    out = tmp_path / "out"
    assert main(["score", "--no-progress", "--model", "fake:masked", "--benchmark", "stereoset", "--data",
                 str(subset), "--output", str(out), "--no-cache", "--batch-tokens", "2048"]) == 0
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert {p: r["method"]["name"] for p, r in provenance["runs"].items()} == {
        "intrasentence": "stereoset-mlm", "intersentence": "stereoset-nsp"}
    assert provenance["command"]["batch_tokens"] == 2048
    assert provenance["runs"]["intrasentence"]["run"]["settings"]["batch_tokens"] == 2048
    predictions = json.loads((out / "predictions.json").read_text(encoding="utf-8"))
    from stereoset_eval.curation.loaders.registry import load_items

    items = load_items("stereoset", subset)
    assert len(items) >= 4
    for task in ("intrasentence", "intersentence"):
        assert [p["id"] for p in predictions[task]] == [s.id for i in items if i.task == task for s in i.sentences]


def _fake_study(data_dir, tmp_path, name: str):
    from stereoset_eval.study import parse_config

    return parse_config({
        "study": {"output": str(tmp_path / name), "cache_dir": str(tmp_path / "cache"), "limit": 6,
                  "batch_tokens": 1024},
        "data": {"dir": str(data_dir), "download": False},
        # one model per id: the same id twice is refused (it would count twice in every correlation)
        "models": [{"id": "fake:masked", "name": "masked-a"}, {"id": "fake:causal", "name": "causal"}],
        "benchmarks": [{"name": "StereoSet", "source": "stereoset"}, {"name": "CrowS-Pairs", "source": "crows-pairs"},
                       {"name": "BMNE-CrowS", "source": "curated", "from": "CrowS-Pairs"}],
        "methods": {"masked": ["pll"], "causal": ["causal-ll"]},
        "analysis": {"bootstrap": 50, "permutations": 0},
    }, source="fake-study")


def test_a_study_runs_on_the_fake_models_and_reruns_from_the_cache(data_dir, tmp_path):
    """Planning, scoring, analysis and the report, end to end without a model."""
    from stereoset_eval.study import run_study

    run = run_study(_fake_study(data_dir, tmp_path, "first"))
    assert {j.kind for j in run.jobs} == {"masked", "causal"} and run.cache_stats["computed"] > 0
    report = json.loads(run.paths["json"].read_text(encoding="utf-8"))
    assert {"overview", "table4", "scores/benchmark"} <= {s["key"] for s in report["sections"]}
    runs = report["provenance"]["scores_provenance"].values()
    assert all(r["run"]["settings"]["batch_tokens"] == 1024 for r in runs)
    assert report["provenance"]["options"]["scoring"]["batch_tokens"] == 1024
    again = run_study(_fake_study(data_dir, tmp_path, "again"))
    assert again.cache_stats["computed"] == 0
    assert again.paths["study_scores"].read_bytes() == run.paths["study_scores"].read_bytes()
    assert again.paths["scores"].read_bytes() == run.paths["scores"].read_bytes()
