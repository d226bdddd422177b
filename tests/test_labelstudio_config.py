"""Labeling config, pitfall catalogue and tasks with predictions (offline, SDK validation)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoset_eval import __version__
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Flag
from stereoset_eval.curation.labelstudio import config as cfg
from stereoset_eval.curation.labelstudio.items_io import read_items_jsonl
from stereoset_eval.curation.labelstudio.pitfalls import Pitfall, catalogue_fingerprint, default_catalogue, model_version
from stereoset_eval.curation.labelstudio.tasks import (
    NOT_EDITED, build_tasks, original_texts, prediction_for, proposed_decision, validate_tasks, write_tasks_json,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LabelInterface = pytest.importorskip("label_studio_sdk.label_interface").LabelInterface


@pytest.fixture(scope="module")
def pitfalls():
    return default_catalogue()


@pytest.fixture(scope="module")
def items():
    return read_items_jsonl(FIXTURES / "labelstudio_items.jsonl")


def test_catalogue_is_the_rule_registry(pitfalls):
    from stereoset_eval.curation.rules import JUDGEMENT_PITFALLS, RULES

    # every rule but the model judges (a judge registers itself when a run uses it; it is no checkbox)
    assert [p.name for p in pitfalls] == [name for name, r in RULES.items() if r.stage != "judge"]
    assert {p.name for p in pitfalls if not p.automatic} == set(JUDGEMENT_PITFALLS)
    swap = [p for p in pitfalls if not p.automatic and "should be swapped" in p.description.lower()]
    assert len(swap) == 1


def test_model_version_names_tool_and_rule_set(pitfalls):
    mv = model_version(pitfalls)
    assert mv == f"stereoset-eval-{__version__}+rules.{catalogue_fingerprint(pitfalls)}"
    reworded = [Pitfall(p.name, "other words", p.automatic, p.severity) for p in pitfalls]
    assert model_version(reworded) == mv
    assert model_version(pitfalls[1:]) != mv
    flipped = [Pitfall(p.name, p.description, not p.automatic) for p in pitfalls]
    assert model_version(flipped) != mv


def test_config_is_valid_and_complete(pitfalls):
    xml = cfg.labeling_config(pitfalls)
    cfg.validate_config(xml)
    interface = LabelInterface(xml)
    controls = {c.name: c for c in interface.controls}
    assert set(controls) == set(cfg.CONTROLS)
    assert controls["pitfalls"].labels == [p.name for p in pitfalls]
    assert controls["pitfalls"].attr["choice"] == "multiple"
    assert controls["dimension"].labels == ["Personality Traits", "Attitudes and Beliefs", "Roles and Behaviors",
                                            "Physical Characteristics", "unclear"]
    assert controls["dimension"].attr["choice"] == "single-radio"
    assert controls["decision"].labels == ["keep", "edit", "remove"]
    assert {o.name for o in interface.objects} == set(cfg.TEXT_OBJECTS)
    assert controls["edited_sent_less"].to_name == ["sent_less"]
    assert cfg.labeling_config(pitfalls) == xml  # deterministic
    hints = [c.attr["hint"] for c in controls["pitfalls"].labels_attrs.values()]
    assert all(h.startswith(("[automatic] ", "[judgement] ")) for h in hints)


def test_config_escapes_descriptions():
    xml = cfg.labeling_config([Pitfall("quote", 'says "x" & <y>', True)])
    cfg.validate_config(xml)
    assert LabelInterface(xml).get_control("pitfalls").labels_attrs["quote"].attr["hint"] == '[automatic] says "x" & <y>'


def test_duplicate_pitfall_names_refused():
    with pytest.raises(StereosetEvalError, match="duplicate pitfall"):
        cfg.labeling_config([Pitfall("a", "", True), Pitfall("a", "", False)])


@pytest.mark.parametrize("xml, message", [
    ('<View><Text name="t" value="$t"/><Choices name="c" toName="nowhere"><Choice value="a"/></Choices></View>',
     "toName"),
    ('<View><Text name="t" value="$t"/><Text name="t" value="$u"/></View>', "non-unique"),
    ("<View><Text", ""),
])
def test_validate_config_rejects(xml, message):
    with pytest.raises(StereosetEvalError, match=f"invalid Label Studio labeling config.*{message}"):
        cfg.validate_config(xml)


def _mutate(xml: str, old: str, new: str) -> str:
    assert old in xml
    return xml.replace(old, new)


@pytest.mark.parametrize("change, compare_pitfalls, problem", [
    (lambda x: x, True, None),
    (lambda x: _mutate(x, cfg.CONFIG_MARKER, "my project"), True, "not a stereoset-eval config"),
    (lambda x: _mutate(x, '<Choice value="remove"/>', ""), True, "choices of 'decision'"),
    (lambda x: _mutate(x, 'name="comment"', 'name="note"'), True, "missing control 'comment'"),
    (lambda x: _mutate(x, '<TextArea name="edited_sent_more" toName="sent_more"',
                       '<Choices name="edited_sent_more" toName="sent_more"').replace(
        'rows="2"/>\n  <TextArea name="edited_sent_less"', 'rows="2"></Choices>\n  <TextArea name="edited_sent_less"'),
     True, "control 'edited_sent_more' is a choices"),
    (lambda x: _mutate(x, '<Choice value="a"', '<Choice value="b"'), True, "pitfall choices differ"),
    (lambda x: _mutate(x, '<Choice value="a"', '<Choice value="b"'), False, None),
])
def test_schema_problems(change, compare_pitfalls, problem):
    expected = cfg.labeling_config([Pitfall("a", "", True)])
    found = cfg.read_schema(change(expected))
    problems = cfg.schema_problems(found, cfg.read_schema(expected), compare_pitfalls=compare_pitfalls)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0]


def test_tasks_have_valid_predictions(items, pitfalls):
    xml = cfg.labeling_config(pitfalls)
    tasks = build_tasks(items, pitfalls=pitfalls)
    validate_tasks(tasks, xml)
    interface = LabelInterface(xml)
    names = {p.name for p in pitfalls}
    for item, task in zip(items, tasks):
        assert interface.validate_task({"data": task["data"]})
        assert interface.validate_prediction(task["predictions"][0], return_errors=True) == []
        assert task["data"]["item_id"] == item.id
        (pred,) = task["predictions"]
        assert pred["model_version"] == model_version(pitfalls)
        by = {r["from_name"]: r["value"] for r in pred["result"]}
        assert sorted(by.get("pitfalls", {"choices": []})["choices"]) == sorted({f.rule for f in item.flags} & names)
        assert by.get("dimension", {"choices": [None]})["choices"] == [item.dimension]
        assert by["decision"]["choices"] == [proposed_decision(item, pitfalls)]
        assert by["edited_sent_more"]["text"] == [item.text("sent_more")]
        assert by["edited_sent_less"]["text"] == [item.text("sent_less")]


def test_gender_swapped_pair_shows_its_original(items):
    # items 4 (CrowS-Pairs) and 7 (StereoSet): instances the curation pipeline normalised,
    # sent_less is the gender swap of sent_more (edits recorded on sent_less only)
    for swapped in (items[4], items[7]):
        assert {e.sentence_role for e in swapped.provenance.edits} == {"sent_less"}
        assert original_texts(swapped) == {"sent_more": NOT_EDITED, "sent_less": swapped.text("sent_more")}
    assert original_texts(items[0]) == {"sent_more": NOT_EDITED, "sent_less": NOT_EDITED}


def test_original_from_parent_and_unrevertible_edits(items, stereoset_items, crows_items):
    stereo = items[7]
    parent = next(i for i in stereoset_items if i.id == stereo.provenance.derived_from)
    assert original_texts(stereo, parent) == {"sent_more": NOT_EDITED, "sent_less": parent.text("stereotype")}
    crows = items[4]
    parent = next(i for i in crows_items if i.id == crows.provenance.derived_from)
    assert original_texts(crows, parent) == {"sent_more": NOT_EDITED, "sent_less": parent.text("sent_more")}
    broken = stereo.replace(sentences=(stereo.sentences[0], stereo.sentences[1].__class__(
        stereo.sentences[1].id, "Something else entirely.", "sent_less")))
    assert original_texts(broken)["sent_less"].startswith("edits: token ")


def test_proposed_decision(items, pitfalls):
    item = items[1]
    assert proposed_decision(item, pitfalls) == "keep"
    auto_error = next(p for p in pitfalls if p.automatic and p.severity == "error").name
    judgement = next(p for p in pitfalls if not p.automatic).name
    assert proposed_decision(item.with_flags([Flag(auto_error, item.id, "error", "m")]), pitfalls) == "remove"
    assert proposed_decision(item.with_flags([Flag(auto_error, item.id, "warning", "m")]), pitfalls) == "keep"
    assert proposed_decision(item.with_flags([Flag(judgement, item.id, "error", "m")]), pitfalls) == "keep"
    assert proposed_decision(item.with_flags([Flag("not_a_pitfall", item.id, "error", "m")]), pitfalls) == "keep"


def test_predictions_from_the_real_rules(crows_items, pitfalls):
    """Harmonised CrowS-Pairs gender pairs through the rule runner: the prediction pre-checks
    exactly the automatic pitfalls the rules flagged."""
    from stereoset_eval.curation.pairs import harmonise
    from stereoset_eval.curation.rules.runner import run_rules

    pairs = run_rules([harmonise(i) for i in crows_items if i.bias_type == "gender"][:60]).items
    flagged = [it for it in pairs if it.flags]
    assert flagged
    for it in flagged:
        pred = prediction_for(it, pitfalls)
        checked = next((r["value"]["choices"] for r in pred["result"] if r["from_name"] == "pitfalls"), [])
        assert set(checked) == {f.rule for f in it.flags} & {p.name for p in pitfalls}


@pytest.mark.parametrize("make, message", [
    (lambda items: [items[0], items[0]], "duplicate item id"),
    (lambda items: [items[0].replace(direction=None)], "is not a pair item"),
    (lambda items: [items[0].replace(dimension="Looks")], "dimension 'Looks' is not one of"),
])
def test_build_tasks_refuses(items, pitfalls, make, message):
    with pytest.raises(StereosetEvalError, match=message):
        build_tasks(make(items), pitfalls=pitfalls)


def test_tasks_json_file_round_trips(tmp_path, items, pitfalls):
    tasks = build_tasks(items, pitfalls=pitfalls)
    path = write_tasks_json(tmp_path / "sub" / "tasks.json", tasks)
    assert json.loads(path.read_text(encoding="utf-8")) == tasks
    assert [p.name for p in path.parent.iterdir()] == ["tasks.json"]  # no temporary file left


def test_missing_data_field_is_caught(items, pitfalls):
    tasks = build_tasks(items[:1], pitfalls=pitfalls)
    del tasks[0]["data"]["orig_sent_less"]
    with pytest.raises(StereosetEvalError, match="lacks data fields"):
        validate_tasks(tasks, cfg.labeling_config(pitfalls))


def test_invalid_prediction_is_caught(items, pitfalls):
    tasks = build_tasks(items[:1], pitfalls=pitfalls)
    tasks[0]["predictions"][0]["result"][0]["value"]["choices"] = ["not-a-choice"]
    with pytest.raises(StereosetEvalError, match=f"prediction for item {items[0].id} is invalid"):
        validate_tasks(tasks, cfg.labeling_config(pitfalls))
