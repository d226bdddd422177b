"""``stereoset-eval score``: files written, defaults by model kind, options, errors."""

from __future__ import annotations

import csv
import json

import pytest

from stereoset_eval.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def stereoset_subset(ids_csv, tmp_path_factory):
    """Two intrasentence and two intersentence examples of the real dev file (all their rows)."""
    with open(ids_csv, encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    header, body = rows[0], rows[1:]
    keep = []
    for task in ("intrasentence", "intersentence"):
        clusters = list(dict.fromkeys(r[1] for r in body if r[0] == task))[:2]
        keep += [r for r in body if r[1] in clusters]
    path = tmp_path_factory.mktemp("data") / "stereoset_subset.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([header] + keep)
    return path


@pytest.fixture(scope="module")
def crows_subset(crows_csv, tmp_path_factory):
    with open(crows_csv, encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    path = tmp_path_factory.mktemp("data") / "crows_subset.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows[:4])
    return path


def _run(*argv) -> int:
    return main(["score", "--no-progress", *map(str, argv)])


def test_stereoset_bert_defaults_write_official_predictions(stereoset_subset, models_dir, tmp_path):
    out = tmp_path / "out"
    rc = _run("--model", models_dir / "tiny-bert", "--benchmark", "stereoset", "--data", stereoset_subset,
              "--output", out, "--cache-dir", tmp_path / "cache", "--batch-tokens", 512)
    assert rc == 0
    predictions = json.loads((out / "predictions.json").read_text())
    assert set(predictions) == {"intrasentence", "intersentence"}
    assert len(predictions["intrasentence"]) == 6 and len(predictions["intersentence"]) == 6
    assert set(predictions["intrasentence"][0]) == {"id", "score"}
    provenance = json.loads((out / "provenance.json").read_text())
    methods = {part: run["method"]["name"] for part, run in provenance["runs"].items()}
    assert methods == {"intrasentence": "stereoset-mlm", "intersentence": "stereoset-nsp"}
    assert provenance["data"][0]["sha256"] and provenance["runs"]["intrasentence"]["model"]["weights_sha256"]
    with open(out / "scores.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 12 and {"item_id", "sentence_id", "role", "method", "score"} <= set(table[0])
    records = json.loads((out / "scores.json").read_text())
    assert records["methods"]["stereoset-mlm"]["records"][0]["token_logprobs"]
    assert records["provenance"]["methods"] == methods  # the score file says what produced it


def test_stereoset_masked_model_without_nsp_head_skips_intersentence(stereoset_subset, models_dir, tmp_path, capsys):
    out = tmp_path / "out"
    rc = _run("--model", models_dir / "tiny-roberta", "--benchmark", "stereoset", "--data", stereoset_subset,
              "--output", out, "--no-cache", "--option", "leading_space=bias-bench")
    assert rc == 0
    assert "no next-sentence-prediction head" in capsys.readouterr().err
    provenance = json.loads((out / "provenance.json").read_text())
    assert list(provenance["runs"]) == ["intrasentence"] and provenance["notes"]
    assert provenance["runs"]["intrasentence"]["method"]["options"]["leading_space"] == "bias-bench"
    assert list(json.loads((out / "predictions.json").read_text())) == ["intrasentence"]


def test_stereoset_causal_defaults(stereoset_subset, models_dir, tmp_path):
    out = tmp_path / "out"
    assert _run("--model", models_dir / "tiny-gpt2", "--benchmark", "stereoset", "--data", stereoset_subset,
                "--output", out, "--no-cache") == 0
    provenance = json.loads((out / "provenance.json").read_text())
    assert {p: r["method"]["name"] for p, r in provenance["runs"].items()} == {
        "intrasentence": "stereoset-causal", "intersentence": "stereoset-inter-causal"}


def test_crows_rerun_is_served_from_the_cache(crows_subset, tmp_path, capsys):
    # the cache and the files, not a model's numbers: the deterministic fake model (nothing to load)
    args = ["--model", "fake:masked", "--benchmark", "crows-pairs", "--data", crows_subset,
            "--output", tmp_path / "out", "--cache-dir", tmp_path / "cache"]
    assert _run(*args) == 0
    assert _run(*args) == 0
    assert "cache hits 6, computed 0" in capsys.readouterr().err
    with open(tmp_path / "out" / "scores.csv", encoding="utf-8") as fh:
        table = list(csv.DictReader(fh))
    assert [r["sentence_id"] for r in table[:2]] == ["crows:0:more", "crows:0:less"]
    assert all(r["method"] == "crows-nangia" and r["extra_unrounded"] for r in table)


@pytest.mark.parametrize("extra, message", [
    (["--option", "nonsense=1"], "has option 'nonsense'"),
    (["--option", "pll:x=1"], "not used in this run"),
    (["--option", "lowercase"], "expected NAME=VALUE"),
    (["--device", "tpu"], "unknown device"),
    (["--method", "stereoset-causal"], "needs a causal language model"),
])
def test_errors_are_one_line(extra, message, crows_subset, models_dir, tmp_path, capsys):
    rc = _run("--model", models_dir / "tiny-bert", "--benchmark", "crows-pairs", "--data", crows_subset,
              "--output", tmp_path / "out", "--no-cache", *extra)
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_method_that_cannot_score_the_items_is_an_error(crows_subset, models_dir, tmp_path, capsys):
    rc = _run("--model", models_dir / "tiny-bert", "--benchmark", "crows-pairs", "--data", crows_subset,
              "--output", tmp_path / "out", "--no-cache", "--method", "stereoset-mlm")
    assert rc == 2 and "needs a context with BLANK" in capsys.readouterr().err


def test_report_reads_model_and_method_from_score_provenance(tmp_path):
    """`report --scores <score output>` names the scored model and method, not the file stem."""
    import json
    from pathlib import Path

    from stereoset_eval.cli.main import main as cli_main

    data = Path(__file__).parent / "fixtures" / "curation_small_crows.csv"
    model = "fake:masked"  # the provenance's way to the report, not a model's numbers: the fake model
    assert cli_main(["score", "--model", model, "--benchmark", "crows-pairs", "--method", "crows-nangia",
                     "--data", str(data), "--output", str(tmp_path / "s"), "--no-cache"]) == 0
    assert cli_main(["report", "--benchmark", "crows-pairs", "--data", str(data),
                     "--scores", str(tmp_path / "s" / "scores.json"), "--out", str(tmp_path / "r"),
                     "--bootstrap", "50"]) == 0
    prov = json.loads((tmp_path / "r" / "report.json").read_text())["provenance"]
    assert prov["model"]["id"] == model
    assert prov["method"] == "crows-nangia"


@pytest.mark.parametrize("choice, ran", [("scored", "scored positions"), ("all", "all positions")])
def test_last_layer_choice_reaches_the_provenance(choice, ran, crows_subset, models_dir, tmp_path):
    out = tmp_path / "out"
    assert _run("--model", models_dir / "tiny-bert", "--benchmark", "crows-pairs", "--data", crows_subset,
                "--method", "pll", "--last-layer", choice, "--output", out, "--no-cache") == 0
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["command"]["last_layer"] == choice
    (run,) = provenance["runs"].values()
    assert run["run"]["last_layer"] == ran and run["run"]["allocator"] in ("bounded", "fast", "off", "environment", "unavailable")
