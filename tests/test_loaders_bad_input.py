"""Bad input to the loaders: every case raises an error naming the file, row and problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.curation.loaders.crows import load_crows_pairs
from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json
from stereoset_eval.curation.loaders.stereoset_jsonl import load_stereoset_jsonl
from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table

HEADER = "dataset_type,cluster_id,bias_type,target,context,sentence,gold_label,sentence_id"
GOOD_ROWS = [
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is caring.,stereotype,s1",
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is rude.,anti-stereotype,s2",
    "intrasentence,ex1,gender,mother,The mother is BLANK.,The mother is table.,unrelated,s3",
]
CROWS_HEADER = ",sent_more,sent_less,stereo_antistereo,bias_type"


def table(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


def official(examples) -> str:
    return json.dumps({"version": "1.0", "data": {"intrasentence": examples, "intersentence": []}})


GOOD_EXAMPLE = {
    "id": "ex1", "target": "mother", "bias_type": "gender", "context": "The mother is BLANK.",
    "sentences": [
        {"id": "s1", "sentence": "The mother is caring.", "gold_label": "stereotype", "labels": []},
        {"id": "s2", "sentence": "The mother is rude.", "gold_label": "anti-stereotype", "labels": []},
        {"id": "s3", "sentence": "The mother is table.", "gold_label": "unrelated", "labels": []},
    ],
}

CASES = [
    # (id, file name, content, loader, expected row, message regex)
    ("malformed-json", "dev.json", '{"data": {"intrasentence": [', load_stereoset_json, 1, "malformed JSON"),
    ("json-wrong-shape", "dev.json", '[1, 2, 3]', load_stereoset_json, None, "wrong shape"),
    ("json-missing-key", "dev.json", official([{k: v for k, v in GOOD_EXAMPLE.items() if k != "target"}]),
     load_stereoset_json, 1, "lacks 'target'"),
    ("json-unknown-gold", "dev.json", official([{**GOOD_EXAMPLE, "sentences": [
        {**GOOD_EXAMPLE["sentences"][0], "gold_label": "neutral"}] + GOOD_EXAMPLE["sentences"][1:]}]),
     load_stereoset_json, 1, "unknown gold label 'neutral'"),
    ("json-missing-option", "dev.json", official([{**GOOD_EXAMPLE, "sentences": GOOD_EXAMPLE["sentences"][:2]}]),
     load_stereoset_json, 1, "missing unrelated"),
    ("csv-missing-column", "t.csv", table(*[",".join(r.split(",")[:-1]) for r in GOOD_ROWS],
     header=HEADER.rsplit(",", 1)[0]), load_stereoset_table, None, "missing required column.*sentence_id"),
    ("csv-unknown-gold", "t.csv", table(GOOD_ROWS[0], GOOD_ROWS[1].replace("anti-stereotype", "anti"), GOOD_ROWS[2]),
     load_stereoset_table, 2, "unknown gold label 'anti'"),
    ("csv-duplicate-sentence-id", "t.csv", table(GOOD_ROWS[0], GOOD_ROWS[1].replace(",s2", ",s1"), GOOD_ROWS[2]),
     load_stereoset_table, 2, "duplicate sentence id 's1'.*first seen at row 1"),
    ("csv-empty-sentence", "t.csv", table(GOOD_ROWS[0], GOOD_ROWS[1].replace("The mother is rude.", "   "), GOOD_ROWS[2]),
     load_stereoset_table, 2, "empty or whitespace-only"),
    ("csv-wrong-delimiter", "t.csv", table(*[r.replace(",", ";") for r in GOOD_ROWS], header=HEADER.replace(",", ";")),
     load_stereoset_table, None, "wrong delimiter"),
    ("csv-extra-delimiter", "t.csv", table(GOOD_ROWS[0], GOOD_ROWS[1] + ",oops", GOOD_ROWS[2]),
     load_stereoset_table, 2, "malformed table|more fields"),
    ("csv-not-utf8", "t.csv", None, load_stereoset_table, 3, "not valid UTF-8"),
    ("csv-inconsistent-example", "t.csv", table(GOOD_ROWS[0], GOOD_ROWS[1].replace("gender,mother", "gender,father"), GOOD_ROWS[2]),
     load_stereoset_table, 2, "has target 'father' here but 'mother' at row 1"),
    ("jsonl-malformed-line", "s.jsonl", '{"type": "intrasentence"\n', load_stereoset_jsonl, 1, "malformed JSON line"),
    ("jsonl-missing-key", "s.jsonl", json.dumps({"type": "intrasentence", "target": "x", "bias_type": "gender",
     "context": "x BLANK", "stereotype": "a", "anti-stereotype": "b"}) + "\n", load_stereoset_jsonl, 1, "missing key 'unrelated'"),
    ("crows-unknown-direction", "c.csv", table('0,"He is strong.","She is strong.",sterio,gender', header=CROWS_HEADER),
     load_crows_pairs, 1, "unknown direction 'sterio'"),
    ("crows-empty-sentence", "c.csv", table('0,"He is strong.", ,stereo,gender', header=CROWS_HEADER),
     load_crows_pairs, 1, "empty or whitespace-only"),
    ("crows-missing-column", "c.csv", table('0,"He is strong.","She is strong.",stereo',
     header=",sent_more,sent_less,stereo_antistereo"), load_crows_pairs, None, "missing required column.*bias_type"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_names_file_row_problem(tmp_path: Path, case):
    name, fname, content, loader, row, pattern = case
    path = tmp_path / fname
    if content is None:  # non-UTF-8 bytes on the third line
        path.write_bytes((table(*GOOD_ROWS)).encode("utf-8").replace(b"rude", b"r\xe9de"))
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError, match=pattern) as info:
        loader(path)
    err = info.value
    assert str(path) in str(err)
    assert err.row == row
    if row is not None:
        assert f"row {row}" in str(err)


def test_bom_and_windows_line_endings_load(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"\xef\xbb\xbf" + table(*GOOD_ROWS).replace("\n", "\r\n").encode("utf-8"))
    items = load_stereoset_table(path)
    assert len(items) == 1 and items[0].text("stereotype") == "The mother is caring."


def test_context_without_blank_is_flagged_not_dropped(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text(table(*[r.replace("The mother is BLANK.", "The mother is nice.") for r in GOOD_ROWS]))
    (item,) = load_stereoset_table(path)
    (flag,) = [f for f in item.flags if f.rule == "blank_count"]
    assert flag.severity == "error" and flag.evidence["blank_count"] == 0


def test_crows_identical_sentences_flagged(tmp_path: Path):
    path = tmp_path / "c.csv"
    path.write_text(table('0,"He is strong.","He is strong.",stereo,gender', header=CROWS_HEADER))
    (item,) = load_crows_pairs(path)
    assert [f.rule for f in item.flags] == ["identical_sentences"]


def test_missing_file(tmp_path: Path):
    with pytest.raises(DataFormatError, match="does not exist"):
        load_stereoset_table(tmp_path / "nope.csv")
