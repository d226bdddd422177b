"""Parser of Label Studio full JSON exports, on the committed export of the server test.

``fixtures/labelstudio_export.json`` was pulled from a real Label Studio 1.23.2 server by
``test_labelstudio_server.py`` after the annotations of ``fixtures/labelstudio_plan.json``
on 22 curated pairs of the real curation pipeline (expert A and checker B; one cancelled,
one empty, one superseded annotation, one missing dimension, one edit without text, two
tasks never annotated). Edge cases the server cannot produce (no item id, a choice not in
the config, no result key, a duplicated task, duplicate annotations at the same time,
annotators as bare ids) are made by editing a copy of it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.curation.labelstudio.annotations import annotator_name, load_export, parse_export

FIXTURES = Path(__file__).resolve().parent / "fixtures"
META = json.loads((FIXTURES / "labelstudio_meta.json").read_text(encoding="utf-8"))
ITEM_IDS = [json.loads(line)["id"] for line in (FIXTURES / "labelstudio_items.jsonl").read_text().splitlines()]
A, B = META["annotators"]["A"], META["annotators"]["B"]
NAMES = META["pitfall_names"]


@pytest.fixture(scope="module")
def export() -> list[dict]:
    return load_export(FIXTURES / "labelstudio_export.json")


@pytest.fixture()
def export_copy(export) -> list[dict]:
    return copy.deepcopy(export)


def _parse(tasks):
    return parse_export(tasks, pitfall_names=NAMES)


def _task(tasks, index: int) -> dict:
    return next(t for t in tasks if t["data"]["item_id"] == ITEM_IDS[index])


def test_issue_table_of_the_server_export(export):
    parsed = _parse(export)
    found = sorted((i.kind, ITEM_IDS.index(i.item_id), i.annotator or "", i.detail) for i in parsed.issues
                   if i.kind != "superseded")
    assert found == sorted([
        ("cancelled", 19, B, "annotation was cancelled (skipped)"),
        ("empty", 18, B, "submitted with an empty result"),
        ("missing_field", 16, B, "no value for 'dimension'"),
        ("missing_field", 18, A, "no value for 'edited_sent_less'"),
        ("missing_field", 18, A, "no value for 'edited_sent_more'"),
        ("never_annotated", 20, "", ""),
        ("never_annotated", 21, "", ""),
    ])
    superseded = [i for i in parsed.issues if i.kind == "superseded"]
    assert [(ITEM_IDS.index(i.item_id), i.annotator) for i in superseded] == [(17, A)]
    kept = next(a for a in parsed.annotations if a.item_id == ITEM_IDS[17] and a.annotator == A)
    assert kept.decision == "remove" and kept.annotation_id > superseded[0].annotation_id
    assert parsed.n_tasks == 22 and parsed.item_ids == tuple(ITEM_IDS)


def test_no_annotation_is_silently_lost(export):
    parsed = _parse(export)
    total = sum(len(t["annotations"]) for t in export)
    dropped = [i for i in parsed.issues if i.kind in ("cancelled", "empty", "superseded")]
    assert len(parsed.annotations) + len(dropped) == total == 41
    assert len(parsed.annotations) == 20 + 18  # A: items 0-19, B: items 0-17
    assert parsed.annotators() == tuple(sorted((A, B)))


def test_annotation_fields(export):
    parsed = {(ITEM_IDS.index(a.item_id), a.annotator): a for a in _parse(export).annotations}
    x, y, w = META["pitfalls"]["X"], META["pitfalls"]["Y"], META["pitfalls"]["W"]
    assert parsed[12, A].pitfalls == {y} and parsed[12, B].pitfalls == frozenset()
    assert parsed[3, B].pitfalls == {w} and parsed[3, A].pitfalls == frozenset()
    assert parsed[14, B].comment == "the pronouns do not match the names" and parsed[14, B].pitfalls == {x}
    assert parsed[13, B].edited["sent_less"].endswith("(B-13).")
    assert parsed[16, A].edited["sent_less"].startswith("Linda was being sneaky")
    assert parsed[12, A].edited == parsed[12, B].edited and set(parsed[12, A].edited) == {"sent_more", "sent_less"}
    assert parsed[16, B].dimension is None and parsed[16, B].decision == "keep"
    assert parsed[11, B].dimension == "unclear"
    assert parsed[18, A].decision == "edit" and parsed[18, A].edited == {}
    assert all(a.time.endswith("Z") and a.task_id for a in parsed.values())


def _set_completed_by_int(tasks):
    for t in tasks:
        for a in t["annotations"]:
            a["completed_by"] = a["completed_by"]["id"]


def _drop_item_id(tasks):
    del _task(tasks, 3)["data"]["item_id"]


def _unknown_choice(tasks):
    ann = _task(tasks, 0)["annotations"][0]
    ann["result"].append({"from_name": "pitfalls", "to_name": "sent_more", "type": "choices",
                          "value": {"choices": ["no_such_pitfall"]}})


def _result_key_missing(tasks):
    del _task(tasks, 1)["annotations"][0]["result"]


def _duplicate_task(tasks):
    tasks.append(copy.deepcopy(_task(tasks, 2)))
    tasks[-1]["id"] = 10_000
    for a in tasks[-1]["annotations"]:
        a["id"] += 10_000


def _same_time_duplicate(tasks):
    t = _task(tasks, 4)
    twin = copy.deepcopy(t["annotations"][0])
    twin["id"] += 10_000
    twin["result"] = [r for r in twin["result"] if r["from_name"] != "dimension"]
    t["annotations"].append(twin)


@pytest.mark.parametrize("edit, kind, n_extra, usable_delta", [
    (_drop_item_id, "unknown_item", 1, -2),      # both annotations of that task unmatched
    (_unknown_choice, "unknown_value", 1, 0),
    (_result_key_missing, "empty", 1, -1),
    (_duplicate_task, "superseded", 2, 0),       # same annotators again on the same item
    (_same_time_duplicate, "superseded", 1, 0),  # same time: the higher annotation id wins
], ids=["no-item-id", "unknown-choice", "no-result-key", "duplicated-task", "same-time-duplicate"])
def test_edge_cases(export_copy, export, edit, kind, n_extra, usable_delta):
    before = _parse(export)
    edit(export_copy)
    after = _parse(export_copy)
    assert after.issue_counts()[kind] == before.issue_counts()[kind] + n_extra
    assert len(after.annotations) == len(before.annotations) + usable_delta


def test_unknown_choice_is_dropped_and_reported(export_copy):
    _unknown_choice(export_copy)
    parsed = _parse(export_copy)
    issue = next(i for i in parsed.issues if i.kind == "unknown_value")
    assert "no_such_pitfall" in issue.detail
    assert all("no_such_pitfall" not in a.pitfalls for a in parsed.annotations)


def test_same_time_duplicate_keeps_higher_id(export_copy):
    _same_time_duplicate(export_copy)
    parsed = _parse(export_copy)
    ann = next(a for a in parsed.annotations if a.item_id == ITEM_IDS[4] and a.annotator == A)
    assert ann.annotation_id > 10_000 and ann.dimension is None


@pytest.mark.parametrize("completed_by, name", [
    ({"id": 7, "email": "x@y.org"}, "x@y.org"), ({"id": 7}, "user:7"), (7, "user:7"), (None, "user:None"),
])
def test_annotator_name(completed_by, name):
    assert annotator_name(completed_by) == name


def test_completed_by_as_ids(export_copy):
    _set_completed_by_int(export_copy)
    assert {a.annotator for a in _parse(export_copy).annotations} == {"user:1", "user:2"}


@pytest.mark.parametrize("content, message", [
    ('{"tasks": []}', "expected a JSON list of tasks"),
    ('[{"id": 1, "sent_more": "a", "annotator": 1, "annotation_id": 3}]', "looks like a JSON_MIN export"),
    ('[{"id": 1, "annotations": []}]', "task has no 'data' object"),
    ('[{"id": 1, "data": {}, "annotations": {}}]', "'annotations' is not a list"),
    ('[3]', "task is a int"),
    ('[{"id": 1', "not a JSON file"),
])
def test_bad_files_name_the_file_and_task(tmp_path, content, message):
    path = tmp_path / "export.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError, match=message) as info:
        load_export(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(DataFormatError, match="does not exist"):
        load_export(tmp_path / "nope.json")
