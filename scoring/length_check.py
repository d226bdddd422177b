"""Refuse over-long inputs from their token counts, before any masked copy is built.

A method's ``prepare`` builds every request of a unit at once: a pseudo-log-likelihood
method makes one masked copy per token, so a sentence of *n* tokens costs *n²* token slots
(an 80 KB sentence reached 4.7 GB before the exact length check after ``prepare`` could
refuse it). :func:`precheck_lengths` tokenizes each text a unit reads — only a bounded prefix of
a very long one — and refuses the unit if a single text already exceeds the model's limit;
the exact check on the built requests still runs afterwards for combined inputs.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from stereoset_eval.scoring.methods.base import UnitSpec
from stereoset_eval.scoring.records import ScoringError

MAX_BATCH_TOKENS = 1_048_576  # padded tokens per forward batch; beyond this one batch alone needs tens of GB
_SLACK = 2  # a leading-space variant may merge the first word differently: never refuse on that
_CHARS_PER_TOKEN_BOUND = 32  # tokenize at most this many characters per allowed token


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _texts(v)


def cannot_exceed(text: str, max_length: int) -> bool:
    """True if ``text`` cannot encode to more than ``max_length`` tokens: every token covers a byte or
    more, a character at most 4 (an ASCII text's UTF-8 bytes are its characters, so it is not encoded)."""
    n = len(text)
    return 4 * n <= max_length or (n <= max_length and (text.isascii() or len(text.encode("utf-8")) <= max_length))


def token_count(tokenizer: Any, text: str, *, max_length: int) -> tuple[int, bool]:
    """(tokens of ``text``, whether it is a lower bound from a prefix) — bounded work per text."""
    if cannot_exceed(text, max_length):
        return 0, True  # (not counted: the exact check after prepare sees the real lengths)
    window = (max_length + _SLACK + 1) * _CHARS_PER_TOKEN_BOUND
    if len(text) > window:
        n = len(tokenizer.encode(text[:window], special=False))
        if n > max_length + _SLACK:
            return n, True
    # with special tokens, less the template's own: the encoding the methods reuse (one per text)
    return max(0, len(tokenizer.encode(text, special=True)) - _added_specials(tokenizer)), False


def _added_specials(tokenizer: Any) -> int:
    """Tokens the tokenizer adds around a text (2 for BERT's ``[CLS] … [SEP]``)."""
    facts = getattr(tokenizer, "_facts", None)
    if facts is None:
        return len(tokenizer.encode("", special=True))
    if "added_specials" not in facts:
        facts["added_specials"] = len(tokenizer.encode("", special=True))
    return int(facts["added_specials"])


def _may_exceed(units: Sequence[UnitSpec], limit: int) -> Sequence[UnitSpec]:
    """The units one of whose texts does not pass :func:`cannot_exceed`, found with array operations
    over every text of the run (lengths, ASCII flags and, for the few other texts, UTF-8 sizes, each
    by a C-level map); every unit where a text is not a string."""
    import numpy as np

    texts = [v for unit in units for v in unit.inputs.values()]
    if set(map(type, texts)) != {str}:
        return units
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    wide = 4 * lengths > limit  # cannot_exceed's first test fails: its second decides
    if not wide.any():  # every text passes the first test (every StereoSet text): none is checked further
        return []
    counts = np.fromiter(map(len, (unit.inputs for unit in units)), dtype=np.int64, count=len(units))
    owner = np.repeat(np.arange(len(units), dtype=np.int64), counts)
    ascii_ = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    sizes = lengths.copy()  # UTF-8 bytes: an ASCII text's are its characters
    other = np.flatnonzero(wide & ~ascii_ & (lengths <= limit))
    sizes[other] = [len(texts[k].encode("utf-8")) for k in other.tolist()]
    fails = wide & ((lengths > limit) | (sizes > limit))
    return [units[i] for i in np.unique(owner[fails]).tolist()]


def _encode_first(tokenizer: Any, units: Sequence[UnitSpec], limit: int) -> None:
    """Every text :func:`token_count` will encode whole, in one batched tokenizer call, where the
    tokenizer has one (:meth:`~stereoset_eval.scoring.tokenization.TokenizerView.encode_many`: the
    same encodings, which the run's memo then serves to ``token_count`` and to the method). One call
    per text cost tiny-bert ``pll`` over CrowS-Pairs 122 tokenizer calls (issue 35)."""
    encode_many = getattr(tokenizer, "encode_many", None)
    if encode_many is None or not units:
        return
    window = (limit + _SLACK + 1) * _CHARS_PER_TOKEN_BOUND  # longer texts: a prefix first (token_count)
    encode_many((text for unit in units for text in _texts(dict(unit.inputs))
                 if not cannot_exceed(text, limit) and len(text) <= window), special=True)


def precheck_lengths(method: str, units: Sequence[UnitSpec], tokenizer: Any, model: str) -> None:
    """ScoringError listing the units one of whose texts alone exceeds ``tokenizer.max_length``."""
    limit = int(tokenizer.max_length)
    too_long: list[tuple[UnitSpec, int, bool]] = []
    checked = _may_exceed(units, limit)  # token_count's first test for every text, without a call per text
    _encode_first(tokenizer, checked, limit)
    for unit in checked:
        values = list(unit.inputs.values())
        worst, bound = 0, False
        for text in values if all(type(v) is str for v in values) else _texts(dict(unit.inputs)):
            n, is_bound = token_count(tokenizer, text, max_length=limit)
            if n > worst:
                worst, bound = n, is_bound
        if worst > limit + _SLACK:
            too_long.append((unit, worst, bound))
    if too_long:
        shown = ", ".join(f"{', '.join(u.sentence_ids)} ({'at least ' if b else ''}{n} tokens)"
                          for u, n, b in too_long[:5])
        raise ScoringError(f"method {method}: {len(too_long)} input(s) exceed the {limit}-token limit of "
                           f"{model} (no silent truncation): {shown}")
