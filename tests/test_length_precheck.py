"""precheck_lengths (issue 35): texts too short to exceed the limit are passed over without the
tokenizer, unit by unit; any text that could exceed it is still counted."""

from __future__ import annotations

import pytest

from stereoset_eval.scoring.length_check import precheck_lengths
from stereoset_eval.scoring.methods.base import UnitSpec
from stereoset_eval.scoring.records import ScoringError


class CountingTokenizer:
    """One token per character; counts its calls."""

    max_length = 40
    _facts: dict = {"added_specials": 2}

    def __init__(self) -> None:
        self.calls = 0

    def encode(self, text: str, *, special: bool) -> list[int]:
        self.calls += 1
        return [0] * (len(text) + (2 if special else 0))


def unit(*texts: str) -> UnitSpec:
    return UnitSpec("item", ("s",), ("r",), {f"t{i}": t for i, t in enumerate(texts)})


def test_short_ascii_texts_never_reach_the_tokenizer():
    tok = CountingTokenizer()
    precheck_lengths("m", [unit("a" * 10, "b" * 40)], tok, "model")  # 40 ASCII characters: at most 40 tokens
    assert tok.calls == 0


def test_a_text_that_could_exceed_the_limit_is_still_counted():
    tok = CountingTokenizer()
    precheck_lengths("m", [unit("a" * 10, "é" * 21)], tok, "model")  # 42 UTF-8 bytes: could be 41+ tokens
    assert tok.calls == 1
    with pytest.raises(ScoringError, match="exceed the 40-token limit"):
        precheck_lengths("m", [unit("a" * 10), unit("é" * 45)], tok, "model")
    with pytest.raises(ScoringError, match="exceed the 40-token limit"):
        precheck_lengths("m", [unit("a" * 45)], tok, "model")


class BatchingTokenizer(CountingTokenizer):
    """:class:`CountingTokenizer` with a batched call that records what it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def encode_many(self, texts, *, special: bool) -> None:
        assert special
        self.batches.append(list(texts))


def test_the_texts_counted_whole_are_encoded_first_in_one_batched_call():
    tok = BatchingTokenizer()
    long_text = "é" * 2000  # past the window: token_count reads a prefix first, so not batched
    units = [unit("a" * 10, "é" * 21), unit("b" * 5), unit("c" * 45), unit(long_text)]
    with pytest.raises(ScoringError) as refused:
        precheck_lengths("m", units, tok, "model")
    assert tok.batches == [["é" * 21, "c" * 45]]
    plain = CountingTokenizer()  # without the batched call: the same verdict
    with pytest.raises(ScoringError) as same:
        precheck_lengths("m", units, plain, "model")
    assert str(refused.value) == str(same.value)


def test_a_real_tokenizer_counts_from_the_batch(models_dir, crows_items, monkeypatch):
    """With a real tokenizer's memo, no text is encoded one call at a time, and the counts equal
    the one-call-per-text counts."""
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.length_check import token_count
    from stereoset_eval.scoring.methods import get_method

    backend = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu")
    tok = backend.tokenizer
    spec = get_method("pll")
    units = spec.units(list(crows_items), {})
    texts = [u.inputs["sentence"] for u in units if len(u.inputs["sentence"]) * 4 > tok.max_length]
    assert texts  # CrowS-Pairs has sentences the first test cannot pass over
    expected = [token_count(tok, t, max_length=tok.max_length) for t in texts]  # outside a memo: one call each
    calls = []
    original = type(tok)._encode_words_direct
    monkeypatch.setattr(type(tok), "_encode_words_direct", lambda self, b, t: calls.append(t) or original(self, b, t))
    with tok.memoized({}):
        precheck_lengths("pll", units, tok, "tiny-bert")
        assert [token_count(tok, t, max_length=tok.max_length) for t in texts] == expected
    assert calls == []


def test_the_units_checked_are_those_a_text_of_which_may_exceed_the_limit():
    """The array form of :func:`cannot_exceed`'s tests picks exactly the units one of whose texts
    fails it: ASCII and non-ASCII texts around the limit in characters and in UTF-8 bytes."""
    import random

    from stereoset_eval.scoring.length_check import _may_exceed, cannot_exceed

    rng = random.Random(35)
    limit = 40
    pieces = ["a", "é", "漢", "😀", " "]
    units = []
    for k in range(400):
        texts = {f"t{j}": "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 60))) for j in range(rng.randrange(1, 4))}
        units.append(UnitSpec(f"i{k}", (f"s{k}",), ("stereotype",), texts))
    expected = [u for u in units if not all(cannot_exceed(t, limit) for t in u.inputs.values())]
    assert 0 < len(expected) < len(units)
    assert _may_exceed(units, limit) == expected
    short = [u for u in units if all(4 * len(t) <= limit for t in u.inputs.values())]  # none may exceed: no array work
    assert len(short) > 10 and _may_exceed(short, limit) == [] == [u for u in short if u in expected]
