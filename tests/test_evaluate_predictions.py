"""`stereoset-eval evaluate-predictions` reproduces the published bert-base-cased numbers."""

from __future__ import annotations

import json

import pytest

from stereoset_eval.cli.main import main

PRED = "predictions_bert-base-cased_BertNextSentence_BertLM.json"


@pytest.fixture(scope="module")
def published(data_dir):
    return json.loads((data_dir / "reference-results" / "stereoset_dev_scores_nadeem2021.json").read_text())[
        "bert-base-cased"
    ]


def _leaves(ref, path=()):
    for k, v in ref.items():
        if isinstance(v, dict):
            yield from _leaves(v, path + (k,))
        else:
            yield path + (k,), v


def _get(doc, path):
    for k in path:
        doc = doc[k]
    return doc


def test_reproduces_published_numbers_official_count(ids_csv, data_dir, published, tmp_path, capsys):
    out = tmp_path / "results.json"
    rc = main(
        [
            "evaluate-predictions",
            "--gold",
            str(ids_csv),
            "--predictions",
            str(data_dir / "reference-results" / PRED),
            "--output",
            str(out),
            "--official-count",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "intrasentence/gender" in printed and "85.77" in printed
    doc = json.loads(out.read_text())
    n = 0
    for path, want in _leaves(published):
        got = _get(doc, path)
        if path[-1] == "Count":
            assert got == want, path
        else:
            assert got == pytest.approx(want, abs=1e-9, rel=0), path
        n += 1
    assert n == 44
    assert doc["meta"]["count"].startswith("Count = evaluation.py-compatible")
    assert doc["intrasentence"]["gender"]["Examples"] == 255


def test_true_counts_by_default(ids_csv, data_dir, tmp_path, capsys):
    out = tmp_path / "results.json"
    assert (
        main(
            [
                "evaluate-predictions",
                "--gold",
                str(ids_csv),
                "--predictions",
                str(data_dir / "reference-results" / PRED),
                "--output",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(out.read_text())
    assert doc["intrasentence"]["gender"]["Count"] == 255 and doc["overall"]["Count"] == 4229
    assert doc["meta"]["count"].startswith("Count = true number")


def test_missing_ids_are_an_error(ids_csv, data_dir, tmp_path, capsys):
    preds = json.loads((data_dir / "reference-results" / PRED).read_text())
    dropped = [p["id"] for p in preds["intersentence"][:12]]
    preds["intersentence"] = preds["intersentence"][12:]
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps(preds))
    assert main(["evaluate-predictions", "--gold", str(ids_csv), "--predictions", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "12 sentence id(s)" in err and "(+7 more)" in err
    assert sum(d in err for d in dropped) == 5  # the first five are named
    assert "Traceback" not in err


def test_nan_score_is_an_error(ids_csv, data_dir, tmp_path, capsys):
    text = (data_dir / "reference-results" / PRED).read_text()
    preds = json.loads(text)
    victim = preds["intrasentence"][5]["id"]
    preds["intrasentence"][5]["score"] = float("nan")
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps(preds))
    assert main(["evaluate-predictions", "--gold", str(ids_csv), "--predictions", str(bad)]) == 2
    assert victim in capsys.readouterr().err


def test_wrong_shape_is_an_error(ids_csv, tmp_path, capsys):
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"scores": {"x": 1.0}}))
    assert main(["evaluate-predictions", "--gold", str(ids_csv), "--predictions", str(bad)]) == 2
    assert "predictions keys must be among" in capsys.readouterr().err
