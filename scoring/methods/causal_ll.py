"""``causal-ll``: summed log-likelihood of a sentence under a causal LM (lm-eval's CrowS-Pairs).

lm-evaluation-harness scores a CrowS-Pairs sentence as ``loglikelihood("", sentence)``: an
empty context becomes the prefix token (the tokenizer's BOS, else EOS — ``<|endoftext|>`` for
GPT-2), so the input is ``[prefix] + encode(sentence)`` (no other special tokens) and the score
is ``sum_i log p(t_i | prefix, t_<i)`` in natural log. Unlike ``stereoset-causal``, the prefix is
part of the same forward pass (the sentence sits at positions 1..n).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from stereoset_eval.scoring.methods.base import (
    Method, Option, Prepared, SentenceResult, TableRowsPrepared, UnitSpec, accepts_any_sentences, single_sentence_units,
    unit_error, warm_inputs,
)
from stereoset_eval.scoring.methods.stereoset_causal import resolve as resolve_start_token
from stereoset_eval.scoring.methods.stereoset_causal import encoded_sentences, start_id
from stereoset_eval.scoring.requests import InputKey, Request
from stereoset_eval.scoring.table import RequestTable, concatenated
from stereoset_eval.scoring.tokenization import TokenizerView

NAME = "causal-ll"


def prepare(unit: UnitSpec, tok: TokenizerView, options: Mapping[str, Any]) -> Prepared:
    ids = tok.encode(unit.inputs["sentence"], special=False)
    if not ids:
        raise unit_error(NAME, unit, "the sentence encodes to no tokens")
    prefix = start_id(tok, options)
    return Prepared([Request(tuple([prefix] + ids), tuple((i, t) for i, t in enumerate(ids)))], {"ids": ids})


def prepare_table(units: Sequence[UnitSpec], tok: TokenizerView, options: Mapping[str, Any]) -> Sequence[Prepared]:
    """:func:`prepare` for every unit, as the rows of one :class:`~stereoset_eval.scoring.table.RequestTable`
    (the same request and state, the same first error): every sentence encoded in one batched call,
    its gathers ``(i, t_i)`` on ``[prefix] + ids`` made with array operations."""
    import numpy as np

    sentences = encoded_sentences(units, tok, NAME)
    prefix = start_id(tok, options)
    index: dict[tuple[int, ...], int] = {}
    inputs: list[InputKey] = []
    codes = []
    for ids in sentences:
        code = index.get(ids)
        if code is None:
            code = index[ids] = len(inputs)
            inputs.append(((prefix,) + ids, None))
        codes.append(code)
    n, firsts, targets = concatenated(sentences)
    total = len(targets)
    table = RequestTable(inputs, np.repeat(np.array(codes, dtype=np.int64), n),
                         np.arange(total, dtype=np.int64) - np.repeat(firsts, n),  # t_i read at position i
                         targets, np.append(firsts, total), np.arange(len(sentences) + 1, dtype=np.int64))
    return TableRowsPrepared(table, {"ids": sentences})


def reduce(unit: UnitSpec, prep: Prepared, outputs: list[list[float]], options: Mapping[str, Any]) -> list[SentenceResult]:
    return reduce_rows({"ids": [prep.state["ids"]]}, [0], [list(outputs[0])], options)[0]


def reduce_rows(columns: Mapping[str, Sequence[Any]], rows: Sequence[int], flats: Sequence[list[float]],
                options: Mapping[str, Any]) -> list[list[SentenceResult]]:
    """:func:`reduce` of units ``rows``, from their states as columns and each one's tokens'
    log-probabilities in order (its one request's outputs): their sum."""
    of, ids = SentenceResult.of, columns["ids"]
    return [[of(sum(lps), len(lps), tuple(ids[i]), tuple(lps))] for i, lps in zip(rows, flats)]


METHOD = Method(
    name=NAME,
    description="causal LM log-likelihood: summed log p(token | prefix token, earlier tokens)",
    model_kind="causal",
    reference="EleutherAI lm-evaluation-harness crows_pairs (loglikelihood with empty context)",
    version=1,
    options=(Option("start_token", "auto", "prefix token; 'auto' = the tokenizer's BOS (else EOS) token; or a token string",
                    check=lambda v: isinstance(v, str) and bool(v)),),
    accepts=accepts_any_sentences,
    units=single_sentence_units,
    prepare=prepare,
    reduce=reduce,
    warm=warm_inputs("sentence", special=False),
    resolve=resolve_start_token,
    prepare_table=prepare_table,
    reduce_rows=reduce_rows,
    plain_rows=True,  # floats, ints and tuples of them (reduce_rows)
)
