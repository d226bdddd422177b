"""Checks that a model can serve a method, run before transformers loads it.

transformers answers some bad models with a deep, multi-line error (a missing folder reads
as a malformed hub id) and others with no error at all (a folder without tokenizer files
gets an empty tokenizer that maps every word to ``[UNK]``; a BERT checkpoint loads as a
causal LM). These checks turn each into one :class:`ScoringError` naming the model.
"""

from __future__ import annotations

import os
from typing import Any

from stereoset_eval.scoring.fingerprint import TOKENIZER_FILES
from stereoset_eval.scoring.records import ScoringError

TOKENIZER_SETTINGS: tuple[str, ...] = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
_KIND_WORDS = {"masked": "masked language model", "causal": "causal language model",
               "nsp": "model with a next-sentence-prediction head"}


def check_model_folder(model: str) -> None:
    """A local model folder must exist and hold ``config.json`` and tokenizer files.

    Without tokenizer files transformers builds an empty tokenizer that maps every word to
    ``[UNK]`` and the scores are silently meaningless; a missing folder would be reported as
    a malformed hub id.
    """
    if not (os.path.isabs(model) or model.startswith(("./", "../", "~")) or os.path.exists(model)):
        return  # a hub id
    folder = os.path.expanduser(model)
    if not os.path.exists(folder):
        raise ScoringError(f"model folder {model!r} does not exist")
    if not os.path.isdir(folder):
        raise ScoringError(f"model {model!r} is a file; give the folder that holds config.json and the weights")
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise ScoringError(f"model folder {model!r} has no config.json (not a saved transformers model)")
    vocab = [n for n in TOKENIZER_FILES if n not in TOKENIZER_SETTINGS]
    if not any(os.path.isfile(os.path.join(folder, n)) for n in vocab):
        raise ScoringError(f"model folder {model!r} has no tokenizer (none of {', '.join(vocab)}); save the "
                           "tokenizer with the model (transformers would build an empty one that reads every "
                           "word as unknown)")


def read_config(model: str, revision: str | None = None) -> Any:
    """``model``'s transformers config (no weights loaded); a one-line ScoringError if it cannot be read."""
    from transformers import AutoConfig

    from stereoset_eval.scoring.backends import _one_line, quiet_transformers

    check_model_folder(model)
    try:
        with quiet_transformers():
            return AutoConfig.from_pretrained(model, revision=revision)
    except (OSError, ValueError) as exc:
        raise ScoringError(f"cannot read the config of {model!r}: {_one_line(exc)}") from None


def check_model_source(model: str, kind: str, revision: str | None = None) -> None:
    """Clear errors for a model that cannot serve ``kind``, before transformers is asked.

    Checks the folder (:func:`check_model_folder`) and that the config describes a model of
    the right kind: a causal LM where a masked one is needed, or the reverse, would load with
    a freshly initialised head or score with an unrelated objective.
    """
    if kind == "nsp":
        _check_nsp_architecture(model, revision)
        return
    from stereoset_eval.scoring.backends import model_kinds_available

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
