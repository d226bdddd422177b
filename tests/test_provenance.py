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


def test_build_provenance_is_typed_and_reads_as_the_dict_it_writes(tmp_path):
    prov = build_provenance(model="m", options={"limit": 3}, timestamp="t")
    assert isinstance(prov, ReportProvenance) and prov.model == "m" and prov.tool.git_commit == ToolInfo.current().git_commit
    assert prov["model"] == {"id": "m", "revision": None} and dict(prov) == prov.to_dict()  # the written shape
    assert json.loads(json.dumps(prov.to_dict())) == prov
    assert ReportProvenance.from_dict(json.loads(json.dumps(prov.to_dict()))) == prov


def test_a_report_file_reads_its_provenance_back_typed(tmp_path):
    from stereoset_eval.analysis.report_model import Report
    from stereoset_eval.analysis.report_writer import write_report

    prov = build_provenance(model="m", method="pll", timestamp="t")
    paths = write_report(Report("r", (), prov), tmp_path / "out")
    back = ReportProvenance.from_dict(json.loads(paths["json"].read_text())["provenance"])
    assert back == prov and back.tool.version == __version__ and back.method == "pll"


def test_curation_and_label_studio_blocks_are_typed_with_version_and_commit():
    from stereoset_eval.foundation.provenance_records import (
        CurationProvenance, LabelStudioMergeProvenance, curation_provenance, labelstudio_merge_provenance,
    )

    cur = curation_provenance(rules_version="22", lexicon_sha256="ab", config={"seed": 1},
                              inputs=[{"path": "a.csv", "sha256": "cd"}], rule_failures=2, output_kind="automatic curation",
                              reviewed_inputs=[], judge_note="kept in extra")
    assert cur.tool.version == __version__ and cur.tool.git_commit == ToolInfo.current().git_commit
    assert cur["rule_failures"] == 2 and cur["judge_note"] == "kept in extra" and cur["tool"]["command"] == "curate"
    assert CurationProvenance.from_dict(json.loads(json.dumps(cur.to_dict()))) == cur
    old = CurationProvenance.from_dict({"tool": "stereoset-eval", "tool_version": "0.0.9", "rules_version": "21"})
    assert (old.tool.version, old.tool.git_commit, old.rules_version) == ("0.0.9", None, "21")  # written before
    merge = labelstudio_merge_provenance(adjudication="primary", n_kept=3, n_edited=1, annotators=["a", "b"],
                                         export_items_not_in_input=[])
    assert merge["n_kept"] == 3 and merge["tool"]["git_commit"] == ToolInfo.current().git_commit
    assert LabelStudioMergeProvenance.from_dict(json.loads(json.dumps(merge.to_dict()))) == merge
    legacy = LabelStudioMergeProvenance.from_dict({"tool": f"stereoset-eval {__version__}", "n_kept": 2})
    assert legacy.tool.version == __version__ and legacy.n_kept == 2
    with pytest.raises(StereosetEvalError, match="newer"):
        CurationProvenance.from_dict({**cur.to_dict(), "schema_version": 99})


def test_a_report_reads_limit_and_the_score_file_block_typed():
    from stereoset_eval.analysis.results_table import report_limit

    runs = {"intrasentence": {"model": {"id": "m"}, "method": {"name": "stereoset-mlm"}}}
    scored = ScoreProvenance.of_runs(runs, command={"limit": 7}).to_dict()
    prov = build_provenance(method="stereoset-mlm", scores_provenance=scored, timestamp="t")
    assert prov.limit == 7 and prov.scores is not None and prov.scores.methods == {"intrasentence": "stereoset-mlm"}
    assert report_limit({"provenance": prov.to_dict()}) == 7 == report_limit({"provenance": prov})
    study = build_provenance(options={"limit": 3}, scores_provenance={"job": {"run": {}}}, timestamp="t")
    assert study.limit == 3 and study.scores is None  # a study's job records are not a score file's block
    assert ReportProvenance.of({}).limit is None and ReportProvenance.of({}).tool.version == "unknown"
