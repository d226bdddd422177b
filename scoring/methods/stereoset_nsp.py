"""``stereoset-nsp``: StereoSet intersentence with a next-sentence-prediction head (BERT).

Reproduces moinnadeem/StereoSet @ ead7d086 ``eval_discriminative_models.py``
``evaluate_intersentence`` with ``intersentence_loader.IntersentenceDataset`` (its
``BertTokenizer`` ``_tokenize`` path) and ``models.BertNextSentence``:

* input ids ``[CLS] ids(tokenize(context)) [SEP] ids(tokenize(sentence)) [SEP]`` (tokens via
  ``tokenize`` + ``convert_tokens_to_ids``), token type ids 0 up to and including the first
  ``[SEP]``, then 1; no padding at batch size 1 (here: padding with an attention mask);
* score = ``softmax(NSP logits)[is_next_index]``, ``P(IsNext)``: index 0 for BERT-style heads,
  as the reference does for model names containing "bert".
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from stereoset_eval.foundation.items import Item
from stereoset_eval.scoring.methods.base import Method, Option, Prepared, SentenceResult, UnitSpec, sentence_units, unit_error
from stereoset_eval.scoring.requests import Request
from stereoset_eval.scoring.tokenization import TokenizerView

NAME = "stereoset-nsp"


def accepts(item: Item) -> str | None:
    if not item.context or "BLANK" in item.context:
        return "needs a context without BLANK (StereoSet intersentence items)"
    return None


def units(items: Sequence[Item], options: Mapping[str, Any]) -> list[UnitSpec]:
    return sentence_units(items, lambda item, text: {"context": item.context, "sentence": text})


def pair_input(context_ids: list[int], sentence_ids: list[int], cls_id: int, sep_id: int) -> tuple[list[int], list[int]]:
    """The reference's ``add_special_tokens_sequence_pair`` and segment ids for BERT.

    >>> pair_input([10, 11], [12], cls_id=2, sep_id=3)
    ([2, 10, 11, 3, 12, 3], [0, 0, 0, 0, 1, 1])
    """
    ids = [cls_id] + context_ids + [sep_id] + sentence_ids + [sep_id]
    first_sep = ids.index(sep_id)
    return ids, [1 if i > first_sep else 0 for i in range(len(ids))]


def prepare(unit: UnitSpec, tok: TokenizerView, options: Mapping[str, Any]) -> Prepared:
    cls_id = tok.require_id("cls", method=NAME)
    sep_id = tok.require_id("sep", method=NAME)
    context_ids = tok.tokenize_to_ids(unit.inputs["context"])
    sentence_ids = tok.tokenize_to_ids(unit.inputs["sentence"])
    if not context_ids or not sentence_ids:
        raise unit_error(NAME, unit, "the context or the sentence tokenizes to nothing")
    ids, types = pair_input(context_ids, sentence_ids, cls_id, sep_id)
    return Prepared([Request(tuple(ids), ((0, options["is_next_index"]),), tuple(types))], {"n": len(ids)})


def reduce(unit: UnitSpec, prep: Prepared, outputs: list[list[float]], options: Mapping[str, Any]) -> list[SentenceResult]:
    lp = outputs[0][0]
    return [SentenceResult(score=math.exp(lp), n_tokens=prep.state["n"], extra={"log_p_is_next": lp})]


METHOD = Method(
    name=NAME,
    description="StereoSet intersentence, next-sentence-prediction head: P(IsNext | context, sentence)",
    model_kind="nsp",
    reference="moinnadeem/StereoSet@ead7d086 code/eval_discriminative_models.py evaluate_intersentence (BertNextSentence)",
    version=1,
    options=(Option("is_next_index", 0, "index of the IsNext class in the NSP logits (0 for BERT)", (0, 1)),),
    accepts=accepts,
    units=units,
    prepare=prepare,
    reduce=reduce,
)
