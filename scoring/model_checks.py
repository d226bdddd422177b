"""Checks that a model can serve a method, run before transformers loads it.

transformers answers some bad models with a deep, multi-line error (a missing folder reads
as a malformed hub id) and others with no error at all (a folder without tokenizer files
gets an empty tokenizer that maps every word to ``[UNK]``; a BERT checkpoint loads as a
causal LM). These checks turn each into one :class:`ScoringError` naming the model.
"""

from __future__ import annotations

from stereoset_eval.scoring.model_info import (  # noqa: F401 - check_model_folder, read_config: re-exported
    TOKENIZER_SETTINGS, check_model_folder, model_kinds_available, read_config,
)
from stereoset_eval.scoring.records import ScoringError

_KIND_WORDS = {"masked": "masked language model", "causal": "causal language model",
               "nsp": "model with a next-sentence-prediction head"}


def check_model_source(model: str, kind: str, revision: str | None = None) -> None:
    """Clear errors for a model that cannot serve ``kind``, before transformers is asked.

    Checks the folder (:func:`check_model_folder`) and that the config describes a model of
    the right kind: a causal LM where a masked one is needed, or the reverse, would load with
    a freshly initialised head or score with an unrelated objective.
    """
    if kind == "nsp":
        _check_nsp_architecture(model, revision)
        return
    available = model_kinds_available(model, revision)
    if not available[kind]:
        other = next((k for k in ("masked", "causal") if available[k]), None)
        holds = f"holds a {_KIND_WORDS[other]}" if other else "is neither a masked nor a causal language model"
        raise ScoringError(f"model {model!r} {holds}, but this method needs a {_KIND_WORDS[kind]}")


def _check_nsp_architecture(model: str, revision: str | None) -> None:
    """The model type must have a next-sentence-prediction class at all.

    Whether the checkpoint holds the head's weights is checked at load time (missing
    weights); ``architectures`` is not used here because checkpoints such as
    ``bert-base-uncased`` list only ``BertForMaskedLM`` yet ship the NSP head.
    """
    from transformers.models.auto import modeling_auto as auto

    config = read_config(model, revision)
    known = auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES
    if config.model_type not in known:
        raise ScoringError(f"model {model!r} (model type {config.model_type!r}) has no next-sentence-prediction head; "
                           f"this method needs a {_KIND_WORDS['nsp']} (model types {', '.join(sorted(known))})")
