"""Property-based fuzzing of every reader (issue 33; strategies and the property: tests/fuzz_strategies.py).

Each reader gets two fuzzers: *valid* inputs built from generated values (they must load, with
exactly those values), and *hostile* ones (any text, JSON of any type where a field is
expected, other encodings, flipped / deleted / inserted bytes, truncation): they load with items
equal to a reference reading of the same bytes, or end in one ``error:`` line naming the file.
``make fuzz`` runs the same tests with many more examples (``HYPOTHESIS_PROFILE=fuzz``).
"""

from __future__ import annotations

import csv
import io
import json
import tomllib
from typing import Any

import pandas as pd
from hypothesis import example, given, strategies as st

from fuzz_strategies import (  # tests/fuzz_strategies.py
    clean_texts, encode, encodings, input_file, json_values, load_or_error, mutate, mutations, texts,
)
from stereoset_eval.curation.loaders.crows import CROWS_BIAS_TYPES, load_crows_pairs
from stereoset_eval.curation.loaders.pairs_csv import load_pairs
from stereoset_eval.curation.loaders.stereoset_json import load_stereoset_json
from stereoset_eval.curation.loaders.stereoset_jsonl import load_stereoset_jsonl
from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table
from stereoset_eval.foundation.score_file import read_official_predictions, read_scores

ROLES = ("stereotype", "anti-stereotype", "unrelated")
directions = st.sampled_from(("stereo", "antistereo", "Stereo ", "antistereo"))
bias_types = st.sampled_from(CROWS_BIAS_TYPES)


def _csv(rows: list[list[Any]], sep: str = ",") -> str:
    buf = io.StringIO()
    csv.writer(buf, delimiter=sep, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def _reference_rows(raw: bytes, sep: str) -> list[dict[str, str]] | None:
    """Python's csv module's reading of ``raw`` (UTF-8, BOM allowed; Windows line endings normalised to
    ``\n``, as the readers document, inside quoted fields too; blank lines skipped), None if undecodable."""
    try:
        text = raw.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=sep) if r]
    return [dict(zip(rows[0], r)) for r in rows[1:]] if rows else []


# --- CrowS-Pairs (original CSV with the index column first; revised TSV) ------------------------

crows_rows = st.lists(st.tuples(clean_texts, clean_texts, directions, bias_types), min_size=1, max_size=6)
hostile_crows_rows = st.lists(st.tuples(texts, texts, directions | texts, bias_types | texts), min_size=0, max_size=5)


def _crows_bytes(rows: list[tuple], sep: str) -> bytes:
    header = ["", "sent_more", "sent_less", "stereo_antistereo", "bias_type"]
    return _csv([header] + [[i, *r] for i, r in enumerate(rows)], sep).encode("utf-8")


def _check_crows_against_reference(items: list, raw: bytes, sep: str) -> None:
    ref = _reference_rows(raw, sep)
    assert ref is not None, "loaded a file that is not UTF-8"
    assert [(it.text("sent_more"), it.text("sent_less")) for it in items] == \
        [(r["sent_more"], r["sent_less"]) for r in ref], "the items are not the file's rows"


@given(crows_rows, st.sampled_from((",", "\t")))
def test_crows_valid_files_load_exactly(rows, sep):
    with input_file("crows.tsv" if sep == "\t" else "crows.csv", _crows_bytes(rows, sep)) as path:
        items = load_crows_pairs(path)
    assert [(it.text("sent_more"), it.text("sent_less"), it.direction) for it in items] == \
        [(m, s, d.strip().lower()) for m, s, d, _ in rows]


@given(hostile_crows_rows, st.sampled_from((",", "\t")), encodings, mutations)
def test_crows_hostile_files_load_as_read_or_fail_in_one_line(rows, sep, encoding, ops):
    raw = _crows_bytes(rows, sep).decode("utf-8")
    data = mutate(encode(raw, encoding), ops)
    with input_file("crows.tsv" if sep == "\t" else "crows.csv", data) as path:
        items = load_or_error(load_crows_pairs, path)
    if items is not None:
        _check_crows_against_reference(items, data, sep)


# --- StereoSet: official JSON, flat JSONL, per-sentence table -----------------------------------

def _example(i: int, task: str, context: str, target: str, sents: tuple[str, str, str]) -> dict:
    ctx = context if task == "intersentence" else f"{context} BLANK."
    return {"id": f"ex{i}", "target": target, "bias_type": "gender", "context": ctx,
            "sentences": [{"id": f"ex{i}-{r}", "sentence": s, "gold_label": r, "labels": []}
                          for r, s in zip(ROLES, sents)]}


examples = st.lists(st.tuples(st.sampled_from(("intrasentence", "intersentence")), clean_texts, clean_texts,
                              st.tuples(clean_texts, clean_texts, clean_texts)), min_size=1, max_size=4)


def _doc(exs: list[tuple]) -> dict:
    data: dict[str, list] = {"intrasentence": [], "intersentence": []}
    for i, (task, ctx, target, sents) in enumerate(exs):
        data[task].append(_example(i, task, ctx, target, sents))
    return {"version": "1.0-test", "data": data}


def _sentences_of(items: list) -> list[tuple[str, str]]:
    return sorted((s.id, s.text) for it in items for s in it.sentences)


def _json_sentences(doc: Any) -> list[tuple[str, str]]:
    return sorted((str(s["id"]), s["sentence"]) for task in ("intrasentence", "intersentence")
                  for ex in doc["data"].get(task, []) for s in ex["sentences"])


@given(examples)
def test_stereoset_json_valid_files_load_exactly(exs):
    doc = _doc(exs)
    with input_file("dev.json", json.dumps(doc).encode()) as path:
        items = load_stereoset_json(path)
    assert _sentences_of(items) == _json_sentences(doc)
    assert [it.context for it in items] == [ex["context"] for t in ("intrasentence", "intersentence")
                                            for ex in doc["data"][t]]


def _replace_somewhere(doc: Any, where: int, value: Any, drop: bool) -> Any:
    """``doc`` with its ``where``-th node (depth first) replaced by ``value`` (or its key dropped)."""
    counter = [where]

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                counter[0] -= 1
                if counter[0] == 0:
                    if not drop:
                        out[k] = value
                    continue
                out[k] = walk(v)
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(doc)


@given(examples, st.integers(1, 40), json_values, st.booleans(), mutations)
@example(exs=[("intrasentence", "a", "b", ("c", "d", "e"))], where=7, value=10**400, drop=False, ops=[])
def test_stereoset_json_hostile_files_load_as_read_or_fail_in_one_line(exs, where, value, drop, ops):
    doc = _replace_somewhere(_doc(exs), where, value, drop)
    data = mutate(json.dumps(doc).encode(), ops)
    with input_file("dev.json", data) as path:
        items = load_or_error(load_stereoset_json, path)
    if items is not None:
        assert _sentences_of(items) == _json_sentences(json.loads(data.decode("utf-8")))


def _jsonl_lines(exs: list[tuple]) -> list[dict]:
    return [{"type": task, "target": target, "bias_type": "gender",
             "context": ctx if task == "intersentence" else f"{ctx} BLANK.",
             **dict(zip(ROLES, sents))} for task, ctx, target, sents in exs]


@given(examples)
def test_stereoset_jsonl_valid_files_load_exactly(exs):
    lines = _jsonl_lines(exs)
    with input_file("dev.jsonl", "\n".join(json.dumps(x) for x in lines).encode()) as path:
        items = load_stereoset_jsonl(path)
    assert [[it.text(r) for r in ROLES] for it in items] == [[x[r] for r in ROLES] for x in lines]


@given(examples, st.integers(0, 30), json_values, st.booleans(), mutations)
def test_stereoset_jsonl_hostile_files_load_as_read_or_fail_in_one_line(exs, where, value, drop, ops):
    lines = [_replace_somewhere(x, where - 9 * i, value, drop) for i, x in enumerate(_jsonl_lines(exs))]
    data = mutate("\n".join(json.dumps(x) for x in lines).encode(), ops)
    with input_file("dev.jsonl", data) as path:
        items = load_or_error(load_stereoset_jsonl, path)
    if items is not None:
        ref = [json.loads(line) for line in data.decode("utf-8").split("\n") if line.strip()]
        assert [[it.text(r) for r in ROLES] for it in items] == [[x[r] for r in ROLES] for x in ref]


TABLE_HEADER = ["dataset_type", "cluster_id", "target", "bias_type", "context", "sentence", "gold_label", "sentence_id"]


def _table_rows(exs: list[tuple]) -> list[list[str]]:
    rows = []
    for i, (task, ctx, target, sents) in enumerate(exs):
        context = ctx if task == "intersentence" else f"{ctx} BLANK."
        rows += [[task, f"c{i}", target, "gender", context, s, r, f"c{i}-{r}"] for r, s in zip(ROLES, sents)]
    return rows


@given(examples)
def test_stereoset_table_valid_files_load_exactly(exs):
    rows = _table_rows(exs)
    with input_file("dev.csv", _csv([TABLE_HEADER] + rows).encode()) as path:
        items = load_stereoset_table(path)
    assert _sentences_of(items) == sorted((r[7], r[5]) for r in rows)


@given(examples, st.lists(st.tuples(st.integers(0, 200), texts), max_size=3), encodings, mutations)
def test_stereoset_table_hostile_files_load_as_read_or_fail_in_one_line(exs, edits, encoding, ops):
    rows = _table_rows(exs)
    for at, value in edits:  # any text in any cell
        rows[at % len(rows)][at % len(TABLE_HEADER)] = value
    data = mutate(encode(_csv([TABLE_HEADER] + rows), encoding), ops)
    with input_file("dev.csv", data) as path:
        items = load_or_error(load_stereoset_table, path)
    if items is not None:
        ref = _reference_rows(data, ",")
        assert ref is not None, "loaded a file that is not UTF-8"
        assert _sentences_of(items) == sorted((r["sentence_id"], r["sentence"]) for r in ref)


# --- curated pair files (what curate writes, and the BMNE five columns) --------------------------

pair_rows = st.lists(st.tuples(texts.filter(str.strip), texts.filter(str.strip), directions), min_size=1, max_size=5)


def _pairs_frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame({"sent_more": [r[0] for r in rows], "sent_less": [r[1] for r in rows],
                         "stereo_antistereo": [r[2] for r in rows], "bias_type": ["gender"] * len(rows),
                         "category": [""] * len(rows), "id": [f"p{i}" for i in range(len(rows))],
                         "source_id": [f"s{i}" for i in range(len(rows))]})


@given(pair_rows, st.sampled_from(("pairs.csv", "pairs.parquet")))
@example(rows=[("=HYPERLINK(\"x\")", "'=1", "stereo"), ("-x", "''a", "antistereo")], name="pairs.csv")
def test_pair_files_curate_writes_read_back_as_the_exact_text(rows, name):
    from stereoset_eval.curation.export import write_csv, write_parquet

    with input_file(name, b"") as path:
        (write_csv if name.endswith(".csv") else write_parquet)(_pairs_frame(rows), path)
        items = load_or_error(load_pairs, path)
    if items is None:  # refused: only a field the loaders refuse everywhere (the size cap, a quoted newline)
        assert any(len(t) > 10_000 or "\n" in t or "\r" in t for r in rows for t in r[:2])
        return
    assert [(it.text("sent_more"), it.text("sent_less")) for it in items] == [(r[0], r[1]) for r in rows]


@given(pair_rows, encodings, mutations)
@example(rows=[("He ran.", "0\r\n", "stereo")], encoding="utf-8", ops=[])  # CRLF inside quotes (found by make fuzz)
def test_pair_files_hostile_load_as_read_or_fail_in_one_line(rows, encoding, ops):
    frame = _pairs_frame(rows).drop(columns=["source_id"])  # a BMNE-style file: no escaping to undo
    data = mutate(encode(frame.to_csv(index=False, lineterminator="\n"), encoding), ops)
    with input_file("bmne.csv", data) as path:
        items = load_or_error(load_pairs, path)
    if items is not None:
        ref = _reference_rows(data, ",")
        assert ref is not None, "loaded a file that is not UTF-8"
        assert [(it.text("sent_more"), it.text("sent_less")) for it in items] == \
            [(r["sent_more"], r["sent_less"]) for r in ref]


# --- score files and official predictions --------------------------------------------------------

ids = st.one_of(st.from_regex(r"[a-z0-9]{1,8}(:[a-z]{1,5})?", fullmatch=True), texts)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
score_maps = st.dictionaries(ids, finite, min_size=1, max_size=6)


def _score_doc(scores: dict[str, float], shape: int) -> Any:
    records = [{"sentence_id": k, "score": v} for k, v in scores.items()]
    return [{"format": "stereoset-eval-scores", "schema_version": 1,
             "provenance": {"tool": {"name": "stereoset-eval", "version": "0", "git_commit": None}},
             "methods": {"pll": {"records": records}}},
            {"scores": scores}, {"records": records}, records, scores][shape]


def _expected(scores: dict[str, float]) -> dict[str, float] | None:
    """What a reader must return: ids stripped (None when that makes them blank or repeated)."""
    out = {k.strip(): v for k, v in scores.items()}
    return out if len(out) == len(scores) and all(out) else None


@given(score_maps.filter(lambda m: _expected(m) is not None), st.integers(0, 4))
def test_score_files_valid_load_exactly(scores, shape):
    with input_file("scores.json", json.dumps(_score_doc(scores, shape)).encode()) as path:
        got = read_scores(path)
    assert dict(got.scores) == _expected(scores)


@given(score_maps, st.integers(0, 4), st.integers(1, 20), json_values, st.booleans(), mutations)
@example(scores={"a": 1.0}, shape=1, where=2, value=10**400, drop=False, ops=[])
@example(scores={"a": 1.0}, shape=2, where=3, value=-(10**400), drop=False, ops=[])
def test_score_files_hostile_load_as_read_or_fail_in_one_line(scores, shape, where, value, drop, ops):
    doc = _score_doc(scores, shape)
    doc = _replace_somewhere(doc, where, value, drop) if isinstance(doc, dict) else doc
    data = mutate(json.dumps(doc).encode(), ops)
    with input_file("scores.json", data) as path:
        got = load_or_error(read_scores, path)
    if got is not None:
        assert got.scores and all(isinstance(v, float) for v in got.scores.values())


@given(score_maps, st.lists(st.tuples(st.integers(0, 100), texts), max_size=3), encodings, mutations)
@example(scores={"\r": 0.0}, edits=[], encoding="utf-8", ops=[])  # a lone CR unquoted: csv.Error (found by make fuzz)
def test_score_csv_load_as_read_or_fail_in_one_line(scores, edits, encoding, ops):
    rows = [["sentence_id", "score"]] + [[k, repr(v)] for k, v in scores.items()]
    for at, value in edits:
        rows[at % len(rows)][at % 2] = value
    data = mutate(encode(_csv(rows), encoding), ops)
    with input_file("scores.csv", data) as path:
        got = load_or_error(read_scores, path)
    if got is not None:
        ref = _reference_rows(data, ",")
        assert ref is not None
        assert dict(got.scores) == {r["sentence_id"].strip(): float(r["score"]) for r in ref}


@given(score_maps, score_maps, json_values, st.integers(0, 12), mutations)
def test_predictions_load_as_read_or_fail_in_one_line(intra, inter, value, where, ops):
    doc = {"intrasentence": [{"id": k, "score": v} for k, v in intra.items()],
           "intersentence": [{"id": k, "score": v} for k, v in inter.items()]}
    doc = _replace_somewhere(doc, where, value, False)
    data = mutate(json.dumps(doc).encode(), ops)
    with input_file("predictions.json", data) as path:
        got = load_or_error(read_official_predictions, path)
    if got is not None:
        ref = json.loads(data.decode("utf-8"))
        want = {str(r["id"]).strip(): float(r["score"]) for t in ("intrasentence", "intersentence")
                for r in ref.get(t, [])}
        assert dict(got.scores) == want


# --- study TOML ----------------------------------------------------------------------------------

def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if value == value and abs(value) != float("inf") else "nan"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return '""'


def _toml(tables: dict[str, Any]) -> str:
    out = []
    for name, body in tables.items():
        if isinstance(body, list):
            for entry in body:
                out.append(f"[[{name}]]")
                out += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in entry.items()]
        else:
            out.append(f"[{name}]")
            out += [f"{json.dumps(k)} = {_toml_value(v)}" for k, v in body.items()]
    return "\n".join(out) + "\n"


STUDY = {"study": {"title": "fuzz", "output": "out", "limit": 4},
         "data": {"download": False},
         "models": [{"id": "fake:masked"}],
         "benchmarks": [{"name": "CrowS-Pairs", "source": "crows-pairs"}],
         "methods": {"masked": ["pll"]},
         "analysis": {"bootstrap": 10}}
study_keys = st.sampled_from(("title", "output", "limit", "batch_tokens", "device", "dtype", "last_layer",
                              "cache_dir", "seed", "bootstrap", "id", "name", "source", "masked", "causal",
                              "download", "dir", "share_masked_inputs", "deterministic", "compare", "from"))


@given(st.lists(st.tuples(st.sampled_from(sorted(STUDY)), study_keys, json_values), max_size=3), mutations)
@example(edits=[("study", "limit", 10**30)], ops=[])
@example(edits=[("analysis", "bootstrap", 2**63)], ops=[])
def test_study_toml_loads_as_read_or_fails_in_one_line(edits, ops):
    from stereoset_eval.study.config import load_config

    tables = json.loads(json.dumps(STUDY))
    for table, key, value in edits:
        body = tables[table]
        (body[0] if isinstance(body, list) else body)[key] = value
    data = mutate(_toml(tables).encode("utf-8"), ops)
    with input_file("study.toml", data) as path:
        config = load_or_error(load_config, path)
    if config is not None:
        ref = tomllib.loads(data.decode("utf-8"))
        assert config.title == ref["study"]["title"]


# --- Label Studio exports and the gold schema -----------------------------------------------------

def _task(i: int, item_id: Any, choice: Any, annotator: Any) -> dict:
    return {"id": i, "project": 1, "data": {"item_id": item_id, "sent_more": "a", "sent_less": "b"},
            "annotations": [{"id": 10 + i, "completed_by": annotator, "created_at": "2025-01-01T00:00:00Z",
                             "updated_at": "2025-01-01T00:00:00Z", "was_cancelled": False,
                             "result": [{"from_name": "decision", "to_name": "pair", "type": "choices",
                                         "value": {"choices": [choice]}}]}]}


@given(st.lists(st.tuples(ids | json_values, st.sampled_from(("keep", "remove")) | json_values,
                          st.integers(1, 3) | json_values), max_size=4),
       st.integers(0, 40), json_values, st.booleans(), mutations)
# found by this fuzzer: a choice that is a list (unhashable), choices null (not iterable)
@example(tasks=[("He couldn't figure out the issue with the rope.", [], 1)], where=0, value=None, drop=False, ops=[])
@example(tasks=[("He couldn't figure out the issue with the rope.", "keep", 1)], where=18, value=None, drop=False,
         ops=[])
def test_labelstudio_exports_load_or_fail_in_one_line(tasks, where, value, drop, ops):
    from stereoset_eval.curation.labelstudio.annotations import load_export, parse_export

    doc = [_task(i, *t) for i, t in enumerate(tasks)]
    doc = [_replace_somewhere(t, where - 14 * i, value, drop) for i, t in enumerate(doc)]
    data = mutate(json.dumps(doc).encode(), ops)

    def read(path):
        return parse_export(load_export(path), pitfall_names=("not_meaningful_stereotype",), source=path)

    with input_file("export.json", data) as path:
        load_or_error(read, path)


def _gold_rows(rows: list[tuple]) -> list[list[Any]]:
    from stereoset_eval.curation.gold_eval import GOLD_COLUMNS

    out = [list(GOLD_COLUMNS)]
    for dataset, source_id, decision, instance in rows:
        row = {c: "" for c in GOLD_COLUMNS}
        row.update(dataset=dataset, source_id=source_id, decision=decision, instance=instance)
        out.append([row[c] for c in GOLD_COLUMNS])
    return out


gold_rows = st.lists(st.tuples(st.sampled_from(("stereoset", "crows")) | texts, ids,
                               st.sampled_from(("keep", "remove")) | texts, st.sampled_from(("m", "l", "as_is")) | texts),
                     min_size=0, max_size=5)


@given(gold_rows, encodings, mutations)
@example(rows=[], encoding="utf-8", ops=[(3, 0, b"")])  # an empty file (found by this fuzzer)
@example(rows=[("crows", "1", "keep", "m")], encoding="utf-16", ops=[])  # not UTF-8 (found by this fuzzer)
@example(rows=[("crows", "1", "keep", "m")], encoding="utf-8", ops=[(2, 40, b'"')])  # a quote never closed
def test_gold_files_load_as_read_or_fail_in_one_line(rows, encoding, ops):
    from stereoset_eval.curation.gold_eval import load_gold

    data = mutate(encode(_csv(_gold_rows(rows)), encoding), ops)
    with input_file("gold.csv", data) as path:
        df = load_or_error(load_gold, path)
    if df is not None:
        ref = _reference_rows(data, ",")
        assert ref is not None, "loaded a file that is not UTF-8"
        assert [tuple(r[c] for c in ("dataset", "source_id", "decision")) for r in ref] == \
            list(zip(df["dataset"], df["source_id"], df["decision"]))
