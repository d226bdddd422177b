"""Score files: official predictions, CSV and JSON forms; every bad input is a clear error."""

from __future__ import annotations

import json

import pytest

from stereoset_eval.foundation.score_file import check_coverage, read_official_predictions, read_scores
from stereoset_eval.analysis.toy_items import stereoset_item
from stereoset_eval.foundation.errors import DataFormatError

ITEMS = [stereoset_item("a", task="intrasentence"), stereoset_item("b", task="intersentence")]
IDS = {
    "intrasentence": [f"a:{r}" for r in ("stereotype", "anti-stereotype", "unrelated")],
    "intersentence": [f"b:{r}" for r in ("stereotype", "anti-stereotype", "unrelated")],
}


def official(**override):
    doc = {task: [{"id": sid, "score": 0.1 * i} for i, sid in enumerate(ids)] for task, ids in IDS.items()}
    doc.update(override)
    return doc


def write(tmp_path, obj, name="p.json"):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def test_official_predictions_roundtrip(tmp_path):
    f = read_official_predictions(write(tmp_path, official()))
    assert f.format == "stereoset-predictions" and len(f.scores) == 6 and f.by_task["b:unrelated"] == "intersentence"
    check_coverage(f, ITEMS)


@pytest.mark.parametrize(
    "doc, message",
    [
        ([], "must be a JSON object"),
        ({"intrasentense": []}, "keys must be among"),
        ({}, "keys must be among"),
        ({"intrasentence": {"a": 1}}, "must be a list"),
        ({"intrasentence": [["a:x", 1.0]]}, "must be an object"),
        ({"intrasentence": [{"id": "a:x"}]}, "lacks score"),
        ({"intrasentence": [{"score": 1.0}]}, "lacks id"),
        ({"intrasentence": [{"id": "a:x", "score": "high"}]}, "not a number"),
        ({"intrasentence": [{"id": "a:x", "score": True}]}, "not a number"),
        ({"intrasentence": [{"id": "a:x", "score": 1}, {"id": "a:x", "score": 2}]}, "more than once"),
        ({"intrasentence": [{"id": 7, "score": 1}]}, "non-empty string"),
    ],
)
def test_wrong_shape_is_a_clear_error(tmp_path, doc, message):
    path = write(tmp_path, doc)
    with pytest.raises(DataFormatError, match=message) as info:
        read_official_predictions(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_scores_name_the_id(tmp_path, token):
    text = '{"intrasentence": [{"id": "a:stereotype", "score": %s}]}' % token
    with pytest.raises(DataFormatError, match="a:stereotype.*not a finite number"):
        read_official_predictions(write(tmp_path, text))


def test_invalid_json(tmp_path):
    with pytest.raises(DataFormatError, match="not valid JSON"):
        read_scores(write(tmp_path, "{"))


def test_missing_and_unknown_ids_are_listed(tmp_path):
    doc = official()
    doc["intrasentence"] = doc["intrasentence"][1:] + [{"id": f"zz{i}", "score": 0.0} for i in range(7)]
    f = read_official_predictions(write(tmp_path, doc))
    with pytest.raises(DataFormatError) as info:
        check_coverage(f, ITEMS)
    msg = str(info.value)
    assert "1 sentence id(s) of gold data have no score: 'a:stereotype'" in msg
    assert "7 scored id(s) are not sentences" in msg and "(+2 more)" in msg


def test_id_under_wrong_task(tmp_path):
    doc = official()
    doc["intersentence"].append(doc["intrasentence"].pop())
    f = read_official_predictions(write(tmp_path, doc))
    with pytest.raises(DataFormatError, match="1 id\\(s\\) are listed under the wrong task: 'a:unrelated'"):
        check_coverage(f, ITEMS)


def test_csv_scores(tmp_path):
    path = write(tmp_path, "sentence_id,score,extra\na:stereotype,-1.5,x\na:unrelated,2e-3,y\n", "s.csv")
    f = read_scores(path)
    assert f.format == "scores-csv" and f.scores == {"a:stereotype": -1.5, "a:unrelated": 0.002}
    with pytest.raises(DataFormatError, match="row 2.*not a finite number"):
        read_scores(write(tmp_path, "sentence_id,score\na,1\nb,nan\n", "n.csv"))
    with pytest.raises(DataFormatError, match="row 1.*not a number"):
        read_scores(write(tmp_path, "sentence_id,score\na,\n", "e.csv"))
    with pytest.raises(DataFormatError, match="missing column"):
        read_scores(write(tmp_path, "id;score\na;1\n", "w.csv"))


@pytest.mark.parametrize(
    "doc",
    [
        {"scores": {"a:stereotype": 1.0}, "provenance": {"model": "m"}},
        {"records": [{"sentence_id": "a:stereotype", "score": 1.0, "n_tokens": 3}], "provenance": {"model": "m"}},
        [{"sentence_id": "a:stereotype", "score": 1.0}],
        {"a:stereotype": 1.0},
    ],
)
def test_json_score_forms(tmp_path, doc):
    f = read_scores(write(tmp_path, doc))
    assert f.scores == {"a:stereotype": 1.0}
    if isinstance(doc, dict) and "provenance" in doc:
        assert f.recorded == {"model": "m"} and f.provenance.model == "m"
    else:
        assert f.provenance is None and f.recorded == {}


def test_read_scores_detects_official_predictions(tmp_path):
    assert read_scores(write(tmp_path, official())).format == "stereoset-predictions"


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match="does not exist"):
        read_scores(tmp_path / "nope.json")


# --- the versioned score file (foundation/score_file.py) -------------------------------------

def _provenance():
    from stereoset_eval.foundation.provenance import ScoreProvenance

    runs = {"intrasentence": {"model": {"id": "tiny-bert", "revision": "r1"}, "method": {"name": "stereoset-mlm"},
                              "run": {"created_at": "t", "computed": 3}}}
    return ScoreProvenance.of_runs(runs, benchmark="stereoset", command={"batch_tokens": 8192})


def test_score_file_round_trip_embeds_the_provenance(tmp_path):
    from stereoset_eval.foundation.score_file import FORMAT, SCHEMA_VERSION, write_score_file

    records = {"stereoset-mlm": [{"sentence_id": sid, "score": -1.0 - i, "n_tokens": 2}
                                 for i, sid in enumerate(IDS["intrasentence"])]}
    path = write_score_file(tmp_path / "scores.json", records, _provenance())
    f = read_scores(path)
    assert (f.format, f.schema_version) == (FORMAT, SCHEMA_VERSION)
    assert f.scores == {sid: -1.0 - i for i, sid in enumerate(IDS["intrasentence"])}
    assert (f.provenance.model, f.provenance.revision, f.provenance.method) == ("tiny-bert", "r1", "stereoset-mlm")
    assert "run" not in f.recorded["runs"]["intrasentence"]  # timing and cache use stay in provenance.json
    assert not (tmp_path / "provenance.json").exists()  # nothing is read from beside the file


def test_score_file_of_a_newer_schema_is_refused(tmp_path):
    from stereoset_eval.foundation.score_file import score_document

    doc = score_document({"m": [{"sentence_id": "a:stereotype", "score": 1.0}]}, _provenance())
    with pytest.raises(DataFormatError, match="schema 2 is newer"):
        read_scores(write(tmp_path, {**doc, "schema_version": 2}))
    with pytest.raises(DataFormatError, match="unknown score file format"):
        read_scores(write(tmp_path, {**doc, "format": "other"}))


@pytest.mark.parametrize("doc, message", [
    ({"scores": {"a:stereotype": 1.0}, "records": [{"sentence_id": "a:stereotype", "score": 2.0}]},
     "both 'scores' and 'records'"),
])
def test_ambiguous_json_is_one_clear_error(tmp_path, doc, message):
    path = write(tmp_path, doc)
    with pytest.raises(DataFormatError, match=message) as info:
        read_scores(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("header", ["sentence_id,score,pll_score", "sentence_id,score,Score"])
def test_csv_with_two_score_columns_is_one_clear_error(tmp_path, header):
    path = write(tmp_path, f"{header}\na:stereotype,1,2\n", "two.csv")
    with pytest.raises(DataFormatError, match="2 score columns") as info:
        read_scores(path)
    assert str(path) in str(info.value)


def test_score_output_of_earlier_versions_still_reads_without_guessing_its_provenance(tmp_path):
    (tmp_path / "provenance.json").write_text(json.dumps({"model": "not read"}))
    f = read_scores(write(tmp_path, {"stereoset-mlm": {"records": [{"sentence_id": "a:stereotype", "score": 1.0}]}}))
    assert f.scores == {"a:stereotype": 1.0} and f.format == "scores-json" and f.provenance is None
