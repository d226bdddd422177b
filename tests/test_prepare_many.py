"""Batched request building (issue 35): ``stereoset-mlm``'s ``prepare_many`` and
``TokenizerView.decode_many`` give exactly what ``warm`` + ``prepare`` per unit and
``tokenizer.decode`` give, on the first 500 StereoSet intrasentence examples, for both fixture masked
tokenizers (WordPiece uncased, byte-level BPE) and both ``leading_space`` options."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from stereoset_eval.foundation.items import Sentence
from stereoset_eval.scoring.backends import load_backend
from stereoset_eval.scoring.methods import get_method
from stereoset_eval.scoring.records import ScoringError

METHOD = get_method("stereoset-mlm")


@pytest.fixture(scope="module")
def intra(stereoset_items) -> list:
    return [it for it in stereoset_items if it.task == "intrasentence"][:500]  # the test budget: 1,500 sentences


def both_ways(spec: Any, tok: Any, options: dict, units: list) -> tuple[list, list]:
    """(``warm`` then ``prepare`` per unit, ``prepare_many``), each in a fresh run memo."""
    with tok.memoized({}):
        assert spec.warm is not None
        spec.warm(units, tok, options)
        one_by_one = [spec.prepare(u, tok, options) for u in units]
    with tok.memoized({}):
        assert spec.prepare_many is not None
        batched = spec.prepare_many(units, tok, options)
    return one_by_one, batched


@pytest.mark.parametrize(("model", "leading_space"), [("tiny-bert", "none"), ("tiny-roberta", "none"),
                                                      ("tiny-roberta", "bias-bench")])  # bias-bench changes byte-level BPE only
def test_prepare_many_equals_prepare(models_dir, intra, model, leading_space):
    tok = load_backend(str(models_dir / model), kind="masked", device="cpu").tokenizer
    options = METHOD.resolve(tok, METHOD.validate_options({"leading_space": leading_space}))
    one_by_one, batched = both_ways(METHOD, tok, options, METHOD.units(intra, options))
    assert batched == one_by_one
    prefixes = {tuple(p.state["word_ids"][:i]) for p in one_by_one for i in range(1, len(p.state["word_ids"]) + 1)}
    with tok.memoized({}):
        tok.decode_many(prefixes)
        assert {ids: tok.decode(ids) for ids in prefixes} == {ids: tok.tokenizer.decode(list(ids)) for ids in prefixes}


def test_prepare_many_raises_the_first_unit_error(models_dir, intra):
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = METHOD.resolve(tok, METHOD.validate_options({}))
    good = intra[0]
    short = dataclasses.replace(good, id="short", sentences=type(good.sentences)([Sentence("short:0", "Too short", "stereotype")]))
    units = METHOD.units([good, short, good], options)
    for run in (lambda: [METHOD.prepare(u, tok, options) for u in units],
                lambda: METHOD.prepare_many(units, tok, options),
                lambda: METHOD.prepare_table(units, tok, options)):
        with tok.memoized({}), pytest.raises(ScoringError, match="item short .*cannot find the template word"):
            run()


def test_an_input_without_the_mask_is_refused_on_every_path(models_dir, intra, monkeypatch):
    """A mask id no encoded input holds: each path raises prepare's error for the first unit."""
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = METHOD.resolve(tok, METHOD.validate_options({}))
    units = METHOD.units(intra[:3], options)
    real = tok.special_id
    monkeypatch.setattr(tok, "special_id", lambda attr: 10**9 if attr == "mask" else real(attr))
    for run in (lambda: [METHOD.prepare(u, tok, options) for u in units],
                lambda: METHOD.prepare_many(units, tok, options),
                lambda: METHOD.prepare_table(units, tok, options)):
        with tok.memoized({}), pytest.raises(ScoringError, match=f"item {intra[0].id} .*no mask token in the encoded input"):
            run()


@pytest.mark.parametrize("method", ["pll", "pll-word-l2r"])
@pytest.mark.parametrize("model", ["tiny-bert", "tiny-roberta"])
def test_pll_prepare_many_equals_prepare(models_dir, crows_items, model, method):
    """``pll`` / ``pll-word-l2r``: ``prepare_many`` gives the copies, requests and state of ``warm`` +
    ``prepare`` per unit on every CrowS-Pairs sentence."""
    spec = get_method(method)
    tok = load_backend(str(models_dir / model), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    units = spec.units(crows_items, options)
    one_by_one, batched = both_ways(spec, tok, options, units)
    assert batched == one_by_one
    assert [p.copies is None for p in batched] == [p.copies is None for p in one_by_one]
    without_memo = spec.prepare_many(units[:50], tok, options)  # no run memo: each sentence encoded on its own
    assert without_memo == one_by_one[:50]


@pytest.mark.parametrize("method", ["pll", "pll-word-l2r"])
def test_pll_prepare_many_raises_the_first_unit_error(models_dir, crows_items, method):
    spec = get_method(method)
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({}))
    good = crows_items[0]
    empty = dataclasses.replace(good, id="empty", sentences=type(good.sentences)([Sentence("empty:0", " ", "stereotype")]))
    units = spec.units([good, empty, good], options)
    for run in (lambda: [spec.prepare(u, tok, options) for u in units], lambda: spec.prepare_many(units, tok, options)):
        with tok.memoized({}), pytest.raises(ScoringError, match="item empty .*no token to score"):
            run()


@pytest.mark.parametrize(("model", "lowercase"), [("tiny-bert", "auto"), ("tiny-roberta", "auto"), ("tiny-roberta", True)])
def test_crows_prepare_many_equals_prepare(models_dir, crows_items, model, lowercase):
    """``crows-nangia``: ``prepare_many`` gives the copies and state of ``warm`` + ``prepare`` per pair
    on every CrowS-Pairs pair, lower-cased (the shortcut or ``str.lower``) or not."""
    spec = get_method("crows-nangia")
    tok = load_backend(str(models_dir / model), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options({"lowercase": lowercase}))
    units = spec.units(crows_items, options)
    one_by_one, batched = both_ways(spec, tok, options, units)
    assert batched == one_by_one
