"""Official JSON and hub layouts on small in-test data, and round trips between formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoset_eval.curation.loaders.stereoset_hub import HubUnavailableError, load_stereoset_hub, records_from_hub_rows
from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json
from stereoset_eval.curation.loaders.stereoset_records import build_stereoset_items


def to_official_json(items) -> dict:
    """Rebuild the dev.json layout from items (as the fixtures README describes)."""
    data = {"intrasentence": [], "intersentence": []}
    for it in items:
        data[it.task].append({
            "id": it.id, "target": it.target, "bias_type": it.bias_type, "context": it.context,
            "sentences": [
                {"id": s.id, "sentence": s.text, "gold_label": s.role,
                 "labels": [{"human_id": "h", "label": s.role}]}
                for s in it.sentences
            ],
        })
    return {"version": "1.0", "data": data}


def test_official_json_round_trip(stereoset_items, tmp_path: Path):
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(to_official_json(stereoset_items)), encoding="utf-8")
    items = load_stereoset_json(path, split="dev")
    assert len(items) == 4229
    assert [i.id for i in items] == [i.id for i in stereoset_items if i.task == "intrasentence"] + [
        i.id for i in stereoset_items if i.task == "intersentence"]
    a = {i.id: [(s.id, s.text, s.role) for s in i.sentences] for i in items}
    b = {i.id: [(s.id, s.text, s.role) for s in i.sentences] for i in stereoset_items}
    assert a == b
    assert items[0].provenance.format == "stereoset-json" and items[0].provenance.format_version == "1.0"
    assert sum(1 for i in items for f in i.flags if f.rule == "blank_glued") == 4


def test_hub_layout_conversion(stereoset_items):
    """The hub rows' gold_label is a ClassLabel int; names come from the features."""
    names = ["anti-stereotype", "stereotype", "unrelated"]
    intra = [i for i in stereoset_items if i.task == "intrasentence"][:5]
    rows = [{
        "id": it.id, "target": it.target, "bias_type": it.bias_type, "context": it.context,
        "sentences": {
            "sentence": [s.text for s in it.sentences], "id": [s.id for s in it.sentences],
            "labels": [[] for _ in it.sentences], "gold_label": [names.index(s.role) for s in it.sentences],
        },
    } for it in intra]
    recs = records_from_hub_rows(rows, "intrasentence", names, origin=Path("hf://test"))
    items = build_stereoset_items(recs, path=Path("hf://test"), sha256="x", fmt="stereoset-hub")
    assert [(i.id, [s.text for s in i.sentences]) for i in items] == [
        (i.id, [s.text for s in i.sentences]) for i in intra]


def test_hub_offline_gives_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnavailableError, match="McGill-NLP/stereoset"):
        load_stereoset_hub(cache_dir=str(tmp_path), tasks=("intrasentence",))
