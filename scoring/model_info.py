"""What a model's files say before any weights are loaded: its folder, config, kinds and heads.

The one place that reads a model's ``config.json`` and checkpoint header: the loader
(:mod:`stereoset_eval.scoring.backends`), the pre-load checks
(:mod:`stereoset_eval.scoring.model_checks`), the ``score`` command and the study planner all
ask here, so a model's kind is decided by one rule (:func:`detect_model_kind`). Also the two
small helpers every module that talks to transformers needs (:func:`one_line`,
:func:`quiet_transformers`). Imports nothing else of ``scoring`` but records and fingerprint,
so no import circle runs through it.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any, Iterator, Literal

from stereoset_eval.scoring.fingerprint import TOKENIZER_FILES
from stereoset_eval.scoring.records import ScoringError

ModelKind = Literal["masked", "causal"]
TOKENIZER_SETTINGS: tuple[str, ...] = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")
FAKE_PREFIX = "fake:"  # deterministic fake models (stereoset_eval.scoring.fake): fake:masked, fake:causal


def is_fake_model(model: str) -> bool:
    """True for the ids of :mod:`stereoset_eval.scoring.fake` (``fake:masked``, ``fake:causal``)."""
    return model.startswith(FAKE_PREFIX)


def fake_kind(model: str) -> ModelKind:
    """The kind of a fake model id; a one-line error for any other ``fake:`` id."""
    kind = model[len(FAKE_PREFIX):]
    if kind not in ("masked", "causal"):
        raise ScoringError(f"unknown fake model {model!r}; use fake:masked or fake:causal")
    return kind  # type: ignore[return-value]


def one_line(exc: BaseException, limit: int = 400) -> str:
    """A library error message on one line (transformers' messages span several), cut to ``limit``."""
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bars (the report goes into provenance)."""
    from transformers.utils import logging as hf_logging

    level = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        hf_logging.enable_progress_bar()


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

    check_model_folder(model)
    try:
        with quiet_transformers():
            return AutoConfig.from_pretrained(model, revision=revision)
    except (OSError, ValueError) as exc:
        raise ScoringError(f"cannot read the config of {model!r}: {one_line(exc)}") from None


def model_kinds_available(model: str, revision: str | None = None) -> dict[str, bool]:
    """Which kinds ``model``'s config supports: ``{"masked", "causal", "nsp"}`` -> bool.

    Read from ``config.json`` (architectures and model type), without loading weights; the
    StereoSet command uses it for its defaults (an NSP head only if the checkpoint has one).
    A fake model has its kind (``fake:masked`` also an NSP head, as BERT).
    """
    if is_fake_model(model):
        kind = fake_kind(model)
        return {"masked": kind == "masked", "causal": kind == "causal", "nsp": kind == "masked"}
    from transformers.models.auto import modeling_auto as auto

    config = read_config(model, revision)
    archs = " ".join(getattr(config, "architectures", None) or [])
    mtype = config.model_type
    causal_arch = "ForCausalLM" in archs or "LMHeadModel" in archs
    masked_arch = "ForMaskedLM" in archs or "ForPreTraining" in archs
    nsp_type = mtype in auto.MODEL_FOR_NEXT_SENTENCE_PREDICTION_MAPPING_NAMES
    nsp_arch = "ForPreTraining" in archs or "ForNextSentencePrediction" in archs
    return {
        "masked": masked_arch or (not causal_arch and mtype in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES),
        "causal": causal_arch or (not masked_arch and mtype in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES),
        # bert-base-uncased lists only BertForMaskedLM yet ships the NSP head: look at the weights
        "nsp": nsp_type and (nsp_arch or any("seq_relationship" in k for k in checkpoint_weight_names(model, revision))),
    }


def detect_model_kind(model: str, revision: str | None = None) -> ModelKind:
    """``masked`` or ``causal``: the one rule every caller uses (config.json, no weights loaded).

    Masked when the config describes a masked LM (a checkpoint with both heads counts as
    masked), else causal when it describes a causal LM; a model that is neither is a
    :class:`ScoringError`, so callers never guess.
    """
    return kind_from_available(model_kinds_available(model, revision), model)


def kind_from_available(kinds: dict[str, bool], model: str) -> ModelKind:
    """:func:`detect_model_kind` on an answer of :func:`model_kinds_available` already at hand."""
    if kinds["masked"]:
        return "masked"
    if kinds["causal"]:
        return "causal"
    raise ScoringError(f"model {model!r}: cannot tell a masked from a causal language model from its config "
                       "(architectures and model type)")


def checkpoint_weight_names(model: str, revision: str | None = None) -> frozenset[str]:
    """Tensor names in ``model``'s safetensors checkpoint, read from the file header only.

    Sharded checkpoints are read from their index. Returns an empty set when the checkpoint
    is not in safetensors format (then only ``config.architectures`` can tell).
    """
    from transformers.utils import cached_file

    def _find(name: str) -> str | None:
        try:
            return cached_file(model, name, revision=revision, _raise_exceptions_for_missing_entries=False)
        except (OSError, ValueError):
            return None

    single = _find("model.safetensors")
    if single:
        from safetensors import safe_open

        with safe_open(single, framework="pt") as fh:
            return frozenset(fh.keys())
    index = _find("model.safetensors.index.json")
    if index:
        with open(index, encoding="utf-8") as fh:
            return frozenset(json.load(fh).get("weight_map", {}))
    return frozenset()
