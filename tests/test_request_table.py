"""Requests as arrays (issue 35): the StereoSet methods' ``prepare_table`` gives the requests and
state of ``prepare``, and the engine's table path (``TableRows``) runs the same rows as the request
path, in batches planned once for the run: every record equals the request path's to the float32
tolerance (bit for bit on a model whose numbers do not depend on the batch), a shared input runs
once, and a run resumed from the cache gives every number bit for bit; a table batch sliced (an
out-of-memory halving), read by a launcher that takes rows, committed to the cache or reading
values shared with other runs gives the same numbers."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator

import numpy as np
import pytest

from stereoset_eval.foundation.items import Sentence
from stereoset_eval.scoring import api
from stereoset_eval.scoring.backends import load_backend
from stereoset_eval.scoring.engine_rows import TableRows
from stereoset_eval.scoring.methods import get_method
from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.requests import gather_arrays
from stereoset_eval.scoring.shared_work import SharedWork
from stereoset_eval.scoring.settings import RunSettings, within_tolerance
from stereoset_eval.scoring.table import TableBatch
from tests.score_tolerance import execution_counts, scores_agree

CASES = [("tiny-bert", "stereoset-mlm"), ("tiny-roberta", "stereoset-mlm"), ("tiny-gpt2", "stereoset-causal"),
         ("tiny-gpt2", "causal-ll")]


@pytest.fixture(scope="module")
def intra(stereoset_items) -> list:
    return [it for it in stereoset_items if it.task == "intrasentence"][:300]


@contextlib.contextmanager
def request_path(method: str) -> Iterator[None]:
    """The method without its table hooks: the general request path."""
    spec = get_method(method)
    saved = spec.prepare_table, spec.reduce_rows
    object.__setattr__(spec, "prepare_table", None)
    object.__setattr__(spec, "reduce_rows", None)
    try:
        yield
    finally:
        object.__setattr__(spec, "prepare_table", saved[0])
        object.__setattr__(spec, "reduce_rows", saved[1])


def score(items: list, model: str, method: str, **kwargs: Any) -> Any:
    return api.score_items(items, model=model, method=method, device="cpu", use_cache=False, **kwargs)


def records(score_set: Any) -> list[dict]:
    return [r.to_dict() for r in score_set.records]


@pytest.mark.parametrize(("model", "method"), CASES)
def test_prepare_table_gives_the_requests_and_state_of_prepare(models_dir, intra, model, method):
    spec = get_method(method)
    tok = load_backend(str(models_dir / model), kind=spec.model_kind, device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    units = spec.units(intra, options)
    with tok.memoized({}):
        one_by_one = [spec.prepare(u, tok, options) for u in units]
    with tok.memoized({}):
        assert spec.prepare_table is not None
        table = spec.prepare_table(units, tok, options)
    assert TableRows.applies(table)
    assert table == one_by_one  # requests (made from the table) and state
    assert [p.longest for p in table] == [p.longest for p in one_by_one]


def same_but_scores(got: list[dict], expected: list[dict]) -> None:
    """Every record equal but for its numbers (scores, log-probabilities), and those within the
    float32 tolerance promised between executions."""
    assert [{k: v for k, v in r.items() if k not in ("score", "token_logprobs")} for r in got] == \
        [{k: v for k, v in r.items() if k not in ("score", "token_logprobs")} for r in expected]
    scores_agree({r["sentence_id"]: r["score"] for r in got}, {r["sentence_id"]: r["score"] for r in expected}, exact=False)
    lps = [(a, b) for r, e in zip(got, expected) for a, b in zip(r["token_logprobs"], e["token_logprobs"])]
    assert all(within_tolerance(a, b) for a, b in lps)


@pytest.mark.parametrize(("model", "method"), CASES)
def test_table_path_records_equal_the_request_path(models_dir, intra, model, method):
    path = str(models_dir / model)
    table = score(intra, path, method, batch_tokens=1024)
    with request_path(method):
        requests = score(intra, path, method, batch_tokens=1024)
    same_but_scores(records(table), records(requests))  # the same rows, in other batches
    ran, ran_requests = (r.provenance["run"]["execution"] for r in (table, requests))
    assert ran["rows_computed"] < ran_requests["rows_computed"]  # an input several commit groups read runs once
    assert ran["rows_computed"] == len(table_of(intra, path, method).inputs) and ran["oom_halvings"] == []


@pytest.mark.parametrize(("model", "method"), CASES)
def test_where_a_pass_costs_less_than_a_budget_the_table_path_runs_the_request_paths_batches(models_dir, intra, model, method):
    """A budget above the model's per-pass cost (the fixture models: 9,216 tokens): the table path
    keeps the request path's commit groups and batches, so every record is identical, bit for bit."""
    path = str(models_dir / model)
    table = score(intra, path, method, batch_tokens=20_000)
    with request_path(method):
        requests = score(intra, path, method, batch_tokens=20_000)
    assert records(table) == records(requests)
    assert execution_counts(table) == execution_counts(requests)


def table_of(items: list, path: str, method: str) -> Any:
    """The request table ``prepare_table`` makes for the units of ``items`` (its distinct inputs:
    each runs once on the table path)."""
    spec = get_method(method)
    tok = load_backend(path, kind=spec.model_kind, device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    with tok.memoized({}):
        prepared = spec.prepare_table(spec.units(items, options), tok, options)  # type: ignore[misc]
    return prepared[0].table


def test_a_resumed_run_gives_every_number_bit_for_bit(tmp_path, models_dir, intra, monkeypatch):
    """Interrupted after a few commit groups and run again from the cache, the table path computes the
    rest in the batches planned for the whole run: the records of a run never interrupted, bit for bit."""
    from stereoset_eval.scoring.scorers import Scorer

    path = str(models_dir / "tiny-bert")
    whole = records(score(intra, path, "stereoset-mlm", batch_tokens=1024))
    real = Scorer.launch
    launched = []

    def fail_later(self: Scorer, rows: Any) -> Any:
        launched.append(len(rows))
        if len(launched) == 4:
            raise RuntimeError("interrupted")
        return real(self, rows)

    monkeypatch.setattr(Scorer, "launch", fail_later)
    with pytest.raises(RuntimeError, match="interrupted"):
        api.score_items(intra, model=path, method="stereoset-mlm", cache_dir=tmp_path, batch_tokens=1024)
    monkeypatch.setattr(Scorer, "launch", real)
    resumed = api.score_items(intra, model=path, method="stereoset-mlm", cache_dir=tmp_path, batch_tokens=1024)
    assert 0 < resumed.cache_stats["hits"] < len(resumed.records)
    assert records(resumed) == whole


@pytest.mark.parametrize("first_path", ["table", "requests"])
def test_shared_values_are_reused_across_runs_and_paths(models_dir, intra, first_path):
    """With values shared across methods (a study), the table path reads and writes them keyed as the
    request path does: a second run of the same inputs, on either path, runs nothing."""
    path = str(models_dir / "tiny-bert")
    alone = score(intra, path, "stereoset-mlm")
    work = SharedWork()
    settings = RunSettings(share_masked_inputs="on")
    if first_path == "requests":
        with request_path("stereoset-mlm"):
            first = score(intra, path, "stereoset-mlm", shared=work, settings=settings)
    else:
        first = score(intra, path, "stereoset-mlm", shared=work, settings=settings)
    second = score(intra, path, "stereoset-mlm", shared=work, settings=settings)
    if first_path == "table":
        assert records(first) == records(alone)  # nothing to reuse yet: the same batches
    else:
        same_but_scores(records(first), records(alone))
    assert second.provenance["run"]["execution"]["rows_computed"] == 0
    assert second.provenance["run"]["execution"]["rows_reused"] == first.provenance["run"]["execution"]["rows_computed"]
    assert records(second) == records(first)  # every value read back as computed


def test_partly_shared_values_run_only_the_rest(models_dir, intra, monkeypatch):
    """Rows whose every gather another run computed are reused; the rest run, small leftovers of
    several groups together; every number equals the run alone to float32 noise."""
    path = str(models_dir / "tiny-gpt2")
    work = SharedWork()
    settings = RunSettings(share_masked_inputs="on")
    score([it for k, it in enumerate(intra) if k % 3], path, "stereoset-causal", shared=work, settings=settings)
    joined = []
    real_join = TableRows.join
    monkeypatch.setattr(TableRows, "join", lambda self, parts: joined.append(len(parts)) or real_join(self, parts))
    both = score(intra, path, "stereoset-causal", shared=work, settings=settings, batch_tokens=2048)
    assert joined and max(joined) > 1  # leftovers of several groups ran in one launch
    alone = score(intra, path, "stereoset-causal", batch_tokens=2048)
    execution = both.provenance["run"]["execution"]
    assert execution["rows_reused"] > 0 and execution["rows_computed"] > 0
    got, expected = records(both), records(alone)
    assert [r["sentence_id"] for r in got] == [r["sentence_id"] for r in expected]
    assert max(abs(a["score"] - b["score"]) for a, b in zip(got, expected)) < 1e-6


@pytest.mark.parametrize("method", ["stereoset-mlm", "stereoset-causal", "causal-ll"])
def test_table_path_on_the_fake_model_and_the_cache(tmp_path, intra, method):
    model = f"fake:{get_method(method).model_kind}"
    computed = api.score_items(intra, model=model, method=method, cache_dir=tmp_path)
    cached = api.score_items(intra, model=model, method=method, cache_dir=tmp_path)
    with request_path(method):
        requests = score(intra, model, method)
    assert computed.cache_stats["computed"] == len(computed.records) and cached.cache_stats["hits"] == len(cached.records)
    assert records(computed) == records(cached) == records(requests)


def test_table_path_computes_only_what_the_cache_lacks(tmp_path, models_dir, intra):
    """A run whose first units are cached computes the rest from the table (a commit group of some
    of its units), with the numbers of a run that computed everything."""
    path = str(models_dir / "tiny-gpt2")
    api.score_items(intra[:100], model=path, method="stereoset-causal", cache_dir=tmp_path)
    part = api.score_items(intra, model=path, method="stereoset-causal", cache_dir=tmp_path, batch_tokens=2048)
    whole = score(intra, path, "stereoset-causal", batch_tokens=2048)
    hits, computed = part.cache_stats["hits"], part.cache_stats["computed"]
    assert hits >= 300 and computed > 0 and hits + computed == 900  # (a sentence met again later is a hit too)
    got, expected = records(part), records(whole)
    assert [r["sentence_id"] for r in got] == [r["sentence_id"] for r in expected]
    assert max(abs(a["score"] - b["score"]) for a, b in zip(got, expected)) < 1e-6  # other batches: float32 noise


def test_a_sliced_table_batch_reads_what_its_rows_read(models_dir, intra):
    spec = get_method("stereoset-mlm")
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    with tok.memoized({}):
        prepared = spec.prepare_table(spec.units(intra[:40], options), tok, options)
    rows = TableRows(prepared)
    (group,) = rows.groups(10**6, None, 10**9)
    merged = rows.merge(group)
    (batch,) = rows.batches(merged, 10**6, 10**9)  # one padded batch
    assert isinstance(batch, TableBatch) and len(batch) == len(rows.keys(merged)) == len(rows.table.inputs)
    assert len(rows.merge(group)) == 0  # a planned batch runs once
    half = len(batch) // 2
    parts = [batch[:half], batch[half:]]
    assert [r for part in parts for r in part] == list(batch)
    assert np.concatenate([p.entries for p in parts]).tolist() == batch.entries.tolist()
    ids, attention, _, pair_rows, pair_pos, g_pair, g_target = batch.arrays(pad_id=0)
    expected = gather_arrays(list(batch))
    assert [pair_rows.tolist(), pair_pos.tolist(), g_pair.tolist(), g_target.tolist()] == [a.tolist() for a in expected]
    lengths = [len(r.input_ids) for r in batch]
    assert ids.shape == (len(batch), max(lengths))
    assert [ids[i, :n].tolist() for i, n in enumerate(lengths)] == [list(r.input_ids) for r in batch]
    assert (attention is None) == (len(set(lengths)) == 1)


def test_an_out_of_memory_halving_of_a_table_batch_gives_the_same_records(models_dir, intra, monkeypatch):
    import torch

    from stereoset_eval.scoring.scorers import Scorer

    path = str(models_dir / "tiny-gpt2")
    expected = records(score(intra, path, "stereoset-causal"))
    real = Scorer.launch
    halved = []

    def small_batches_only(self: Scorer, rows: Any) -> Any:
        if len(rows) > 64:
            halved.append(len(rows))
            raise torch.OutOfMemoryError("simulated")
        return real(self, rows)

    monkeypatch.setattr(Scorer, "launch", small_batches_only)
    result = score(intra, path, "stereoset-causal")
    assert halved and result.provenance["run"]["execution"]["oom_halvings"]
    got = records(result)
    assert [r["sentence_id"] for r in got] == [r["sentence_id"] for r in expected]
    assert max(abs(a["score"] - b["score"]) for a, b in zip(got, expected)) < 1e-6  # other batches: float32 noise only


def test_prepare_table_raises_the_first_unit_error(models_dir, intra):
    spec = get_method("stereoset-mlm")
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    good = intra[0]
    short = dataclasses.replace(good, id="short", sentences=type(good.sentences)([Sentence("short:0", "Too short", "stereotype")]))
    units = spec.units([good, short, good], options)
    with tok.memoized({}), pytest.raises(ScoringError, match="item short .*cannot find the template word"):
        spec.prepare_table(units, tok, options)
    causal = get_method("stereoset-causal")
    gpt2 = load_backend(str(models_dir / "tiny-gpt2"), kind="causal", device="cpu").tokenizer
    c_options = causal.resolve(gpt2, causal.validate_options({}))
    empty = dataclasses.replace(good, id="empty", sentences=type(good.sentences)([Sentence("empty:0", "", "stereotype")]))
    c_units = causal.units([good, empty], c_options)
    for run in (lambda: [causal.prepare(u, gpt2, c_options) for u in c_units],
                lambda: causal.prepare_table(c_units, gpt2, c_options)):
        with gpt2.memoized({}), pytest.raises(ScoringError, match="item empty .*encodes to no tokens"):
            run()


def test_causal_table_interns_repeated_and_one_token_sentences_as_prepare_reads_them(models_dir, intra):
    """A sentence two units share is one input (its first use's code); a one-token sentence reads
    the start token alone (code 0) and adds no input: the requests are ``prepare``'s, unit by unit."""
    causal = get_method("stereoset-causal")
    gpt2 = load_backend(str(models_dir / "tiny-gpt2"), kind="causal", device="cpu").tokenizer
    options = causal.resolve(gpt2, causal.validate_options({}))
    texts = ["The man was kind.", "a", "The man was kind.", "A woman was there.", "a", "A woman was there."]
    with gpt2.memoized({}):
        assert len(gpt2.encode("a", special=False)) == 1  # the one-token case is what this test is about
    item = dataclasses.replace(intra[0], id="repeats", sentences=type(intra[0].sentences)(
        [Sentence(f"repeats:{k}", text, "stereotype") for k, text in enumerate(texts)]))
    units = causal.units([item], options)
    with gpt2.memoized({}):
        one_by_one = [causal.prepare(u, gpt2, options) for u in units]
    with gpt2.memoized({}):
        table = causal.prepare_table(units, gpt2, options)
    assert table == one_by_one
    inputs = table[0].table.inputs
    assert len(inputs) == 3 and inputs[0] == ((gpt2.encode("<|endoftext|>", special=False)[0],), None)
    assert [ids for ids, _ in inputs[1:]] == [tuple(gpt2.encode(t, special=False)) for t in (texts[0], texts[3])]


@pytest.mark.parametrize("where", [0, 1, 2])
def test_prepare_table_refuses_an_input_without_its_mask_as_prepare_does(models_dir, intra, monkeypatch, where):
    """An encoded masked context without the mask token (a tokenizer that drops it; here the memo's
    ids made so): ``prepare_table``
    names the same unit and input as ``prepare_many``, also when an earlier or later unit has another problem."""
    from stereoset_eval.scoring.tokenization import TokenizerView

    spec = get_method("stereoset-mlm")
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    good = intra[0]
    short = dataclasses.replace(good, id="short", sentences=type(good.sentences)([Sentence("short:0", "Too short", "stereotype")]))
    items = [[intra[1], intra[2], short], [intra[1], short, intra[2]], [short, intra[1], intra[2]]][where]
    bad_context = intra[2].context.split("BLANK")[0]  # every masked context of intra[2] starts so
    original = TokenizerView.encode_many
    mask_id = tok.special_id("mask")

    def encode_many(self: Any, texts: Any, *, special: bool, with_words: bool | None = None) -> None:
        texts = list(texts)
        original(self, texts, special=special, with_words=with_words)
        for text in texts:  # what both paths read back from the memo: that context's ids without the mask
            if special and text.startswith(bad_context):
                self._memo[(text, True)] = tuple(i for i in self._memo[(text, True)] if i != mask_id)

    monkeypatch.setattr(TokenizerView, "encode_many", encode_many)
    unkept = TokenizerView.encoded_unkept

    def encoded_unkept(self: Any, texts: Any, *, special: bool) -> list[tuple[int, ...]]:
        return [tuple(i for i in ids if i != mask_id) if special and text.startswith(bad_context) else ids
                for text, ids in zip(texts, unkept(self, texts, special=special))]

    monkeypatch.setattr(TokenizerView, "encoded_unkept", encoded_unkept)
    units = spec.units(items, options)
    messages = []
    for prepare in (spec.prepare_many, spec.prepare_table):
        with tok.memoized({}), pytest.raises(ScoringError) as caught:
            prepare(units, tok, options)  # type: ignore[misc]
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert ("no mask token" in messages[0]) == (where == 0)  # else the short item, earlier, is named first
