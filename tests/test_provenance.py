"""Typed provenance: one shape for ``tool``, a schema version, lossless to_dict / from_dict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoset_eval import __version__
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.provenance import (
    SCHEMA_VERSION,
    FileRef,
    ReportProvenance,
    ScoreProvenance,
    ToolInfo,
    build_provenance,
)

REPO = Path(__file__).resolve().parent.parent
TOOL_KEYS = {"name", "version", "git_commit", "command"}


def test_report_provenance_round_trips(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("x\n")
    prov = build_provenance(data_files=[data], model="m", revision="r", method="pll", options={"ties": "anti"},
                            n_per_slice={"all": 3}, timestamp="2026-01-01T00:00:00+00:00")
    assert prov["schema_version"] == SCHEMA_VERSION and set(prov["tool"]) == TOOL_KEYS
    typed = ReportProvenance.from_dict(prov)
    assert typed.model == "m" and typed.data_files[0].sha256 == FileRef.of(data).sha256
    assert typed.to_dict() == prov


def test_score_provenance_round_trips_and_drops_only_the_run_block():
    runs = {"pairs": {"model": {"id": "tiny-bert", "revision": None}, "method": {"name": "crows-nangia"},
                      "run": {"created_at": "now", "computed": 6}}}
    prov = ScoreProvenance.of_runs(runs, command={"batch_tokens": 8192}, benchmark="crows-pairs",
                                   data=[FileRef("a.csv", "ab")], notes=["n"])
    assert (prov.model, prov.method, prov.methods) == ("tiny-bert", "crows-nangia", {"pairs": "crows-nangia"})
    assert ScoreProvenance.from_dict(prov.to_dict()) == prov
    stable = prov.stable().to_dict()
    assert "run" not in stable["runs"]["pairs"] and stable["runs"]["pairs"]["method"] == {"name": "crows-nangia"}
    with pytest.raises(StereosetEvalError, match="one model"):
        ScoreProvenance.of_runs({**runs, "other": {"model": {"id": "gpt2"}, "method": {"name": "causal-ll"}}})


def test_a_newer_schema_is_refused_in_one_line():
    prov = ScoreProvenance(ToolInfo.current()).to_dict()
    with pytest.raises(StereosetEvalError, match="schema_version 99 is newer"):
        ScoreProvenance.from_dict({**prov, "schema_version": 99})


def test_tool_has_one_shape_and_old_strings_still_read():
    tool = ToolInfo.current("evaluate-predictions")
    assert set(tool.to_dict()) == TOOL_KEYS and tool.version == __version__
    assert ToolInfo.from_dict(tool.to_dict()) == tool
    old = ToolInfo.from_dict(f"stereoset-eval {__version__} evaluate-predictions")
    assert (old.name, old.version, old.command) == ("stereoset-eval", __version__, "evaluate-predictions")


def test_evaluate_predictions_writes_the_tool_block(ids_csv, data_dir, tmp_path):
    from stereoset_eval.cli.main import main

    out = tmp_path / "r.json"
    preds = data_dir / "reference-results" / "predictions_bert-base-cased_BertNextSentence_BertLM.json"
    assert main(["evaluate-predictions", "--gold", str(ids_csv), "--predictions", str(preds),
                 "--output", str(out)]) == 0
    tool = json.loads(out.read_text())["meta"]["tool"]
    assert ToolInfo.from_dict(tool) == ToolInfo.current("evaluate-predictions")


def test_git_commit_is_computed_in_one_place():
    places = [p.relative_to(REPO).as_posix() for folder in ("foundation", "scoring", "analysis", "study", "cli",
                                                            "curation", "speed")
              for p in (REPO / folder).rglob("*.py") if '"rev-parse"' in p.read_text(encoding="utf-8")]
    assert places == ["foundation/provenance.py"]
