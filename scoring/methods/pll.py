"""``pll`` and ``pll-word-l2r``: pseudo-log-likelihood of masked LMs.

* ``pll`` (Salazar et al. 2020): ``sum_t log P(w_t | W without t)``, each token masked alone.
* ``pll-word-l2r`` (Kauf & Ivanova 2023): when scoring token ``t``, the later tokens of the same
  word are masked too (words from the fast tokenizer's ``word_ids()``), so a multi-piece word
  is not predicted from its own later pieces.

Both reproduce minicons 0.3.39 ``MaskedLMScorer.sequence_score(..., reduction=sum,
PLL_metric="original" | "within_word_l2r")``: natural log, the text encoded with special tokens,
and every position scored except those whose id is the CLS, SEP or PAD id (minicons' rule)
or that the tokenizer marks as special. In ``within_word_l2r`` the extra masks run up to the
last scored position, as in minicons. Per-token values are kept in the records.
"""

from __future__ import annotations

from typing import AbstractSet, Any, Mapping, Sequence

from stereoset_eval.scoring.methods.base import (
    Method, Prepared, SentenceResult, UnitSpec, accepts_any_sentences, single_sentence_units, unit_error,
    warm_inputs,
)
from stereoset_eval.scoring.copies import MaskedCopies
from stereoset_eval.scoring.requests import Request
from stereoset_eval.scoring.tokenization import TokenizerView

PLL = "pll"
PLL_WORD = "pll-word-l2r"


def scored_positions(ids: Sequence[int], special_mask: Sequence[int], excluded_ids: AbstractSet[int]) -> list[int]:
    """Positions that are scored: not special, and not a CLS/SEP/PAD id (minicons).

    >>> scored_positions([2, 10, 11, 3], [1, 0, 0, 1], {2, 3, 0})
    [1, 2]
    >>> scored_positions([2, 10, 3, 3], [1, 0, 0, 1], {2, 3, 0})
    [1]
    """
    n = len(ids)
    if n > 1 and special_mask[0] and special_mask[-1] and special_mask.count(0) == n - 2 \
            and excluded_ids.isdisjoint(ids[1:n - 1]):
        return list(range(1, n - 1))  # the common shape, checked in C: special tokens at both ends only
    return [i for i, (t, s) in enumerate(zip(ids, special_mask)) if not s and t not in excluded_ids]


def mask_sets(positions: Sequence[int], word_ids: Sequence[int | None], *, within_word_l2r: bool) -> list[list[int]]:
    """For each scored position, the positions masked when scoring it.

    >>> mask_sets([1, 2, 3], [None, 0, 0, 1], within_word_l2r=True)
    [[1, 2], [2], [3]]
    >>> mask_sets([1, 2, 3], [None, 0, 0, 1], within_word_l2r=False)
    [[1], [2], [3]]
    """
    if not within_word_l2r or not positions:
        return [[p] for p in positions]
    last = positions[-1]
    of_word: dict[int, list[int]] = {}  # word -> its positions up to the last scored one, in order
    for j in range(last + 1):
        w = word_ids[j]
        if w is not None:
            of_word.setdefault(w, []).append(j)
    out = []
    for p in positions:
        w = word_ids[p]
        if w is None:
            out.append([p])
        else:
            same = of_word[w]
            out.append(same[same.index(p):])  # p, then the word's later positions up to the last scored one
    return out


def mask_spans(positions: Sequence[int], word_ids: Sequence[int | None], *,
               within_word_l2r: bool) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """:func:`mask_sets` as ``(starts, stops)`` spans (each set is ``range(start, stop)``), or None
    if a set is not one run of positions (a word whose pieces are not side by side).

    >>> mask_spans([1, 2, 3], [None, 0, 0, 1], within_word_l2r=True)
    ((1, 2, 3), (3, 3, 4))
    >>> mask_spans([1, 2, 3], [None, 0, 1, 0], within_word_l2r=True) is None
    True
    """
    starts = tuple(positions)
    if not within_word_l2r or not positions:
        return starts, tuple(p + 1 for p in positions)
    last = positions[-1]
    run_stop = [0] * (last + 1)  # one past the end of the run of equal word ids each position is in
    stop, runs = last + 1, 0
    for j in range(last, -1, -1):
        w = word_ids[j]
        if w is None or j == last or word_ids[j + 1] != w:
            stop = j + 1
            runs += w is not None
        run_stop[j] = stop
    if runs != len({w for w in word_ids[:last + 1] if w is not None}):  # a word in two runs: not one span
        return None
    return starts, tuple(run_stop[p] if word_ids[p] is not None else p + 1 for p in positions)


def _excluded_ids(tok: TokenizerView) -> set[int]:
    """The CLS, SEP and PAD ids the tokenizer has: never scored (minicons' rule)."""
    return {t for t in (tok.special_id("cls"), tok.special_id("sep"), tok.special_id("pad")) if t is not None}


def _prepared(name: str, within_word_l2r: bool, unit: UnitSpec, encoded: tuple[Sequence[int], Sequence[int | None], Sequence[int]],
              mask_id: int, excluded: set[int]) -> Prepared:
    """A unit's copies and state from its sentence's ids, word ids and special-tokens mask."""
    ids, word_ids, special = encoded
    positions = scored_positions(ids, special, excluded)
    if not positions:
        raise unit_error(name, unit, "the sentence has no token to score")
    state = {"token_ids": [ids[p] for p in positions]}
    spans = mask_spans(positions, word_ids, within_word_l2r=within_word_l2r)
    if spans is not None:  # every mask one run of positions: the copies as one array request (issue 35)
        return Prepared(state=state, copies=(MaskedCopies.unchecked(tuple(ids), spans[0], spans[1], mask_id=mask_id),))
    requests = []  # a word whose pieces are not side by side: one request per copy
    for p, masked_set in zip(positions, mask_sets(positions, word_ids, within_word_l2r=True)):
        copy = list(ids)
        for j in masked_set:
            copy[j] = mask_id
        requests.append(Request(tuple(copy), ((p, ids[p]),)))
    return Prepared(requests, state)


def _prepare(name: str, within_word_l2r: bool):
    def prepare(unit: UnitSpec, tok: TokenizerView, options: Mapping[str, Any]) -> Prepared:
        mask_id = tok.require_id("mask", method=name)
        encoded = tok.encode_with_words(unit.inputs["sentence"])
        return _prepared(name, within_word_l2r, unit, encoded, mask_id, _excluded_ids(tok))

    return prepare


def _prepare_many(name: str, within_word_l2r: bool):
    def prepare_many(units: Sequence[UnitSpec], tok: TokenizerView, options: Mapping[str, Any]) -> list[Prepared]:
        """:func:`prepare` of every unit in one pass (the same copies, requests, state and first
        error): the sentences encoded in one batched call, the mask and excluded ids looked up once,
        and each encoding read from the memo as it is (issue 35: ~4 µs a sentence)."""
        mask_id = tok.require_id("mask", method=name)
        excluded = _excluded_ids(tok)
        texts = [unit.inputs["sentence"] for unit in units]
        tok.encode_many(texts, special=True)
        return [_prepared(name, within_word_l2r, unit, encoded, mask_id, excluded)
                for unit, encoded in zip(units, map(tok.encoded_with_words, texts))]

    return prepare_many


def reduce(unit: UnitSpec, prep: Prepared, outputs: list[list[float]], options: Mapping[str, Any]) -> list[SentenceResult]:
    return reduce_rows({"token_ids": [prep.state["token_ids"]]}, [0], [[out[0] for out in outputs]], options)[0]


def reduce_rows(columns: Mapping[str, Sequence[Any]], rows: Sequence[int], flats: Sequence[list[float]],
                options: Mapping[str, Any]) -> list[list[SentenceResult]]:
    """:func:`reduce` of units ``rows``, from their states as columns and each one's copies'
    log-probabilities (one gather per copy, in copy order): their sum."""
    of, token_ids = SentenceResult.of, columns["token_ids"]
    return [[of(sum(lps), len(lps), tuple(token_ids[i]), tuple(lps))] for i, lps in zip(rows, flats)]


PLL_METHOD = Method(
    name=PLL,
    description="pseudo-log-likelihood (Salazar et al. 2020): summed log P(token | rest), each token masked alone",
    model_kind="masked",
    reference="minicons 0.3.39 MaskedLMScorer.sequence_score PLL_metric='original', reduction=sum",
    version=1,
    options=(),
    accepts=accepts_any_sentences,
    units=single_sentence_units,
    prepare=_prepare(PLL, within_word_l2r=False),
    reduce=reduce,
    warm=warm_inputs("sentence", special=True),
    prepare_many=_prepare_many(PLL, within_word_l2r=False),
    reduce_rows=reduce_rows,
    plain_rows=True,  # floats, ints and tuples of them (reduce_rows)
)

PLL_WORD_METHOD = Method(
    name=PLL_WORD,
    description="PLL-word-l2r (Kauf & Ivanova 2023): like pll, with later pieces of the same word masked too",
    model_kind="masked",
    reference="minicons 0.3.39 MaskedLMScorer.sequence_score PLL_metric='within_word_l2r', reduction=sum",
    version=1,
    options=(),
    accepts=accepts_any_sentences,
    units=single_sentence_units,
    prepare=_prepare(PLL_WORD, within_word_l2r=True),
    reduce=reduce,
    warm=warm_inputs("sentence", special=True),
    prepare_many=_prepare_many(PLL_WORD, within_word_l2r=True),
    reduce_rows=reduce_rows,
    plain_rows=True,  # floats, ints and tuples of them (reduce_rows)
)
