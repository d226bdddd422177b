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
