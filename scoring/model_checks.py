"""Checks that a model can serve a method, run before transformers loads it.

transformers answers some bad models with a deep, multi-line error (a missing folder reads
as a malformed hub id) and others with no error at all (a folder without tokenizer files
gets an empty tokenizer that maps every word to ``[UNK]``; a BERT checkpoint loads as a
causal LM). These checks turn each into one :class:`ScoringError` naming the model.
"""

from __future__ import annotations

import os
from typing import Any

from stereoset_eval.scoring.methods.base import MODEL_KINDS
from stereoset_eval.scoring.model_info import (  # noqa: F401 - check_model_folder, read_config: re-exported
    TOKENIZER_SETTINGS, check_model_folder, model_kinds_available, read_config,
)
from stereoset_eval.scoring.records import ScoringError

#: weight files that torch reads by unpickling (code from the file runs on load): never loaded
PICKLE_WEIGHTS: tuple[str, ...] = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
#: pickled files a saved model folder may hold beside its weights (not weights)
NOT_WEIGHTS: frozenset[str] = frozenset({"training_args.bin", "optimizer.pt", "scheduler.pt", "rng_state.pth",
                                          "scaler.pt"})

_KIND_WORDS = {"masked": "masked language model", "causal": "causal language model",
               "nsp": "model with a next-sentence-prediction head"}


def check_model_source(model: str, kind: str, revision: str | None = None) -> None:
    """Clear errors for a model that cannot serve ``kind``, before transformers is asked.

    Checks the folder (:func:`check_model_folder`) and that the config describes a model of
    the right kind: a causal LM where a masked one is needed, or the reverse, would load with
    a freshly initialised head or score with an unrelated objective.
    """
    check_weights_format(model, kind)
    if kind == "nsp":
        _check_nsp_architecture(model, revision)
        return
    available = model_kinds_available(model, revision)
    if not available[kind]:
        other = next((k for k in ("masked", "causal") if available[k]), None)
        holds = f"holds a {_KIND_WORDS[other]}" if other else "is neither a masked nor a causal language model"
        raise ScoringError(f"model {model!r} {holds}, but this method needs a {_KIND_WORDS[kind]}")


def pickle_message(model: str, kind: str, pickles: list[str]) -> str:
    """The one line for a model without safetensors weights: what it holds, that pickles are not
    loaded and why, and the conversion. ``pickles``: the pickle files found (none: not listed)."""
    cls = MODEL_KINDS.get(kind, "AutoModel")
    shown = ", ".join(pickles[:3]) + (" …" if len(pickles) > 3 else "")
    holds = (f"holds only a pickle checkpoint ({shown}) and no .safetensors weights" if pickles
             else "has no .safetensors weights")
    return (f"model {model!r} {holds}; pickle checkpoints (pytorch_model.bin, .pt, .ckpt) are not loaded "
            "(unpickling runs code from the file). Convert it once, where you trust the file: "
            f"python -c \"import transformers as t; t.{cls}.from_pretrained('{model}').save_pretrained('{model}')\" "
            "(writes model.safetensors beside it)")


def check_weights_format(model: str, kind: str) -> None:
    """A local model folder must hold safetensors weights.

    transformers falls back to a ``pytorch_model.bin`` (or a ``.pt``/``.ckpt``) when there is no
    ``.safetensors``: a pickle, read by ``torch.load``, which either runs code from the file or —
    ``weights_only`` — stops with torch's multi-line explanation. Both are refused here in one
    line that says how to convert. Hub ids are held to the same rule at load time
    (``use_safetensors=True``).
    """
    folder = os.path.expanduser(model)
    if not os.path.isdir(folder):
        return
    names = sorted(os.listdir(folder))
    if any(n.endswith(".safetensors") for n in names):
        return
    pickles = [n for n in names if n.endswith(PICKLE_WEIGHTS) and n not in NOT_WEIGHTS
               and os.path.isfile(os.path.join(folder, n))]
    if pickles:
        raise ScoringError(pickle_message(model, kind, pickles))


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


def _is_module(model: Any, path: str) -> bool:
    try:
        model.get_submodule(path)
    except (AttributeError, ValueError):
        return False
    return True


def check_load_report(model_id: str, model: Any, report: Any) -> None:
    """Weights the checkpoint has but the config does not describe, and shapes that disagree.

    transformers reports both and loads anyway: a config with fewer layers than the checkpoint
    drops the extra layers without a word, a mismatched shape (``ignore_mismatched_sizes``) is
    re-initialised at random. Either way the model scored is not the model trained. Unexpected
    weights of heads this class does not use (a BERT checkpoint's pooler or next-sentence head
    loaded as a masked LM) are harmless and stay in the load report.
    """
    mismatched = sorted(report.get("mismatched_keys") or [], key=str)
    if mismatched:
        shown = "; ".join(f"{m[0]}: checkpoint {tuple(m[1])} vs config {tuple(m[2])}" if isinstance(m, tuple)
                          and len(m) == 3 else str(m) for m in mismatched[:3])
        raise ScoringError(f"model {model_id!r}: config.json and the weights disagree on {len(mismatched)} "
                           f"tensor shape(s) ({shown}); the model would be re-initialised there — fix config.json "
                           "(e.g. max_position_embeddings, vocab_size, hidden sizes) to match the checkpoint")
    harmful = []
    for key in sorted(report.get("unexpected_keys") or []):
        parts = key.split(".")
        parent = ".".join(parts[:-1])
        if any(p.isdigit() for p in parts) or (parent and _is_module(model, parent)):
            harmful.append(key)
    if harmful:
        shown = ", ".join(harmful[:4]) + (" …" if len(harmful) > 4 else "")
        raise ScoringError(f"model {model_id!r}: the checkpoint has {len(harmful)} weight(s) that the config does "
                           f"not describe ({shown}): config.json does not match the weights (fewer layers?); "
                           "fix config.json (e.g. num_hidden_layers / n_layer)")


def check_special_tokens(model_id: str, tokenizer: Any, model: Any) -> None:
    """Every special token the tokenizer declares must be a row of the model's embeddings.

    A ``mask_token`` missing from the vocabulary becomes a new id past the embedding matrix
    (an index error mid-run) or the unknown token (silently scoring ``[UNK]``).
    """
    try:
        n_embeddings = int(model.get_input_embeddings().num_embeddings)
    except (AttributeError, NotImplementedError):
        return
    unk_id = getattr(tokenizer, "unk_token_id", None)
    for attr in ("mask", "bos", "eos", "cls", "sep", "pad", "unk"):
        token = getattr(tokenizer, f"{attr}_token", None)
        tid = getattr(tokenizer, f"{attr}_token_id", None)
        if token is None or tid is None:
            continue
        if int(tid) >= n_embeddings:
            raise ScoringError(f"model {model_id!r}: the tokenizer's {attr} token {str(token)!r} is not in the "
                               f"model's vocabulary (id {tid}, the embeddings have {n_embeddings} rows); fix "
                               f"{attr}_token in tokenizer_config.json or use the tokenizer saved with the model")
        if attr != "unk" and unk_id is not None and int(tid) == int(unk_id) \
                and str(token) != str(getattr(tokenizer, "unk_token", None)):  # GPT-2: one token for all
            raise ScoringError(f"model {model_id!r}: the tokenizer's {attr} token {str(token)!r} is not in the "
                               f"vocabulary (it reads as the unknown token); fix {attr}_token in "
                               "tokenizer_config.json")
