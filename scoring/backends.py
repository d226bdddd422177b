"""Loading pretrained models and tokenizers: kind, device, dtype, limits, fingerprint.

* Always ``from_pretrained`` (hub id or local folder, optional ``revision``); a checkpoint
  that lacks weights of the requested head (e.g. no NSP head) is an error, because
  transformers would silently initialise them at random.
* ``device``: ``auto`` (CUDA if available, else CPU), ``cpu``, ``cuda`` or ``cuda:N``.
* ``dtype``: float32 by default everywhere (the references ran float32); ``bf16`` / ``fp16``
  are opt-in (``fp16`` only on CUDA). The dtype is part of the cache key.
* ``model_max_length``: tokenizers without one (transformers' huge sentinel) get the model's
  position limit (``max_position_embeddings`` minus RoBERTa's padding offset, or ``n_positions``).
* Head splitting: for masked/causal LMs the output head is applied only at the positions a
  method needs (``base_model`` → hidden states → head), which a probe verifies against the full
  forward pass at load time; models where it differs (logit soft-capping …) use the full pass.
  For BERT-family masked LMs the last encoder layer, too, can run at those positions only
  (:mod:`stereoset_eval.scoring.last_layer`, probe-verified the same way; ``score_items(last_layer=...)``).

Loaded backends are kept (the two most recent) so several methods can share one model.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterator

from stereoset_eval.scoring.fingerprint import HashMemo, fingerprint
from stereoset_eval.scoring.last_layer import probe_last_layer
from stereoset_eval.scoring.memory import limit_onednn_cache
from stereoset_eval.scoring.model_checks import (
    check_load_report, check_model_source, check_special_tokens, pickle_message,
)
from stereoset_eval.scoring.model_info import (  # noqa: F401 - model_kinds_available & co: re-exported
    checkpoint_weight_names, model_kinds_available, one_line, quiet_transformers, read_config,
)
from stereoset_eval.scoring.methods.base import MODEL_KINDS
from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.tokenization import TokenizerView

DTYPES: dict[str, str] = {
    "fp32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16",
    "fp16": "float16", "float16": "float16",
}
_NO_LIMIT = 1_000_000  # transformers uses int(1e30) for "no model_max_length"
_KEEP = 2
_LOADED: "OrderedDict[tuple, Backend]" = OrderedDict()


@dataclass
class Backend:
    """A loaded model ready for scoring.

    Attributes:
        model_id: the id or folder it was loaded from.
        kind: ``masked``, ``causal`` or ``nsp``.
        model: the torch module (eval mode, on ``device``).
        tokenizer: a :class:`~stereoset_eval.scoring.tokenization.TokenizerView`.
        device / dtype: where and in what precision it runs.
        base / head: the split model (None: use the full forward pass).
        hidden_at: ``(inputs, rows, positions) -> hidden states`` running the last encoder layer
            at those positions only (:mod:`stereoset_eval.scoring.last_layer`); None where it does not apply.
        info: fingerprint and load report, for the provenance and the cache key.
    """

    model_id: str
    kind: str
    model: Any
    tokenizer: TokenizerView
    device: Any
    dtype: Any
    base: Any = None
    head: Any = None
    hidden_at: Any = None
    info: dict[str, Any] = field(default_factory=dict)

    def states_at(self, inputs: dict[str, Any], rows: Any, positions: Any, *, one_per_row: bool,
                  last_layer_at_scored: bool = True) -> Any:
        """What the output head needs at ``(rows[i], positions[i])``: the final hidden states
        (``hidden_at`` when allowed and available, else the base model's), or the logits
        themselves when the head is not split (``head`` is None)."""
        if self.head is None:
            return self.model(**inputs).logits[rows, positions]
        if last_layer_at_scored and self.hidden_at is not None:
            return self.hidden_at(inputs, rows, positions, one_per_row=one_per_row)
        return self.base(**inputs).last_hidden_state[rows, positions]

    def identity(self) -> dict[str, Any]:
        """What the cache key needs to know about the model."""
        return {
            "model": self.info["model_id_resolved"],
            "revision": self.info.get("revision"),
            "weights_sha256": self.info.get("weights_sha256"),
            "tokenizer_sha256": self.info.get("tokenizer_sha256"),
            "model_class": self.info["model_class"],
            "dtype": str(self.dtype).replace("torch.", ""),
        }


def resolve_device(device: str | None) -> Any:
    import torch

    name = (device or "auto").lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(name)
    except RuntimeError:
        raise ScoringError(f"unknown device {device!r}; use auto, cpu, cuda or cuda:N") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ScoringError(f"device {device!r} requested but CUDA is not available")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ScoringError(f"device {device!r}: only {torch.cuda.device_count()} CUDA device(s)")
    elif dev.type != "cpu":
        raise ScoringError(f"unsupported device {device!r}; use auto, cpu, cuda or cuda:N")
    return dev


def checkpoint_dtype(model: str, revision: str | None = None) -> str | None:
    """The dtype the checkpoint's config declares (``bfloat16`` …), or None if it declares none."""
    config = read_config(model, revision)
    declared = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    return str(declared).replace("torch.", "") if declared is not None else None


def choose_dtype(dtype: str | None, device: Any, declared: str | None) -> tuple[str | None, str]:
    """``dtype`` with ``auto`` decided, and why (recorded in the provenance as ``model.dtype_choice``).

    ``auto`` is the checkpoint's bf16 on CUDA and fp32 otherwise: fp32 stays the precision on CPU
    and of every reference comparison.

    >>> import torch
    >>> choose_dtype("auto", torch.device("cpu"), "bfloat16")
    ('fp32', 'auto: fp32 (not on CUDA)')
    >>> choose_dtype("auto", torch.device("cuda"), "bfloat16")
    ('bf16', 'auto: bf16 (the checkpoint is bfloat16, on CUDA)')
    >>> choose_dtype(None, torch.device("cuda"), "bfloat16")
    (None, 'fp32 (default)')
    """
    if dtype is None or dtype.lower() != "auto":
        return dtype, f"{dtype} (requested)" if dtype else "fp32 (default)"
    if device.type != "cuda":
        return "fp32", "auto: fp32 (not on CUDA)"
    if declared == "bfloat16":
        return "bf16", "auto: bf16 (the checkpoint is bfloat16, on CUDA)"
    return "fp32", f"auto: fp32 (the checkpoint is {declared or 'of no declared dtype'})"


def resolve_dtype(dtype: str | None, device: Any) -> Any:
    import torch

    name = DTYPES.get((dtype or "fp32").lower())
    if name is None:
        raise ScoringError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPES)}")
    if name == "float16" and device.type == "cpu":
        raise ScoringError("dtype fp16 is not supported on CPU; use fp32 (default) or bf16")
    return getattr(torch, name)


@contextlib.contextmanager
def exact_float32(backend: "Backend") -> Iterator[None]:
    """Keep float32 matrix products in full float32 on CUDA while scoring (TF32 off), then restore.

    The references ran float32; TF32 (10-bit mantissa products, which a user or library may have
    switched on process-wide for speed) moves log-probabilities by ~1e-3 and would break agreement
    with the goldens. Reduced precision is chosen explicitly with ``dtype`` instead. No-op on CPU
    and for bf16/fp16 models.
    """
    import torch

    if backend.device.type != "cuda" or backend.dtype != torch.float32:
        yield
        return
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def position_limit(model: Any) -> int | None:
    """The longest input the model's position embeddings allow (None if unbounded/unknown)."""
    config = model.config
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        limit = getattr(config, attr, None)
        if isinstance(limit, int) and limit > 0:
            embeddings = getattr(model.base_model, "embeddings", None)
            padding_idx = getattr(embeddings, "padding_idx", None)  # RoBERTa: positions start after it
            return limit - (padding_idx + 1) if isinstance(padding_idx, int) else limit
    return None


def _load(model_id: str, kind: str, device: Any, dtype: Any, revision: str | None,
          device_map: str = "none") -> tuple[Any, Any, dict[str, Any]]:
    import transformers

    placement: dict[str, Any] = {}
    if device_map == "auto":
        if kind == "nsp":
            raise ScoringError("device_map auto applies to masked and causal LMs, not to next-sentence heads")
        try:
            import accelerate  # noqa: F401 - transformers needs it for device_map
        except ImportError:
            raise ScoringError("device_map auto needs the accelerate package: pip install 'stereoset-eval[large]'") from None
        placement = {"device_map": "auto"}
    cls = getattr(transformers, MODEL_KINDS[kind])
    problem = None
    try:
        with quiet_transformers():
            tokenizer = transformers.AutoTokenizer.from_pretrained(model_id, revision=revision)
    except Exception as exc:  # noqa: BLE001 - tokenizers raises bare Exception on a damaged tokenizer.json
        problem = f"cannot load the tokenizer of {model_id!r}: {one_line(exc)}; its tokenizer files are damaged " \
                  "or incomplete (save or download them again)"
    if problem is None:
        try:
            with quiet_transformers():  # mismatched shapes are reported (and refused) by check_load_report
                model, report = cls.from_pretrained(model_id, revision=revision, dtype=dtype, output_loading_info=True,
                                                    ignore_mismatched_sizes=True, use_safetensors=True, **placement)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            problem = (pickle_message(model_id, kind, []) if _no_safetensors(exc)
                       else f"cannot load {model_id!r} as {cls.__name__} (model kind {kind!r}): {one_line(exc)}")
        except Exception as exc:  # noqa: BLE001 - safetensors' SafetensorError on a truncated file
            problem = f"cannot read the weights of {model_id!r}: {one_line(exc)}; the weights file is damaged or " \
                      "truncated (download or save the model again)"
    if problem is not None:
        raise ScoringError(problem)
    check_load_report(model_id, model, report)
    check_special_tokens(model_id, tokenizer, model)
    missing = sorted(report.get("missing_keys") or [])
    if missing:
        shown = ", ".join(missing[:6]) + (" …" if len(missing) > 6 else "")
        raise ScoringError(
            f"{model_id!r} has no pretrained weights for part of {type(model).__name__} ({shown}); "
            f"transformers would initialise them at random, so the {kind} scores would be meaningless"
        )
    if not placement:
        model.to(device)
    model.eval()
    load_report = {k: sorted(v) for k, v in report.items() if isinstance(v, (set, list)) and v}
    return tokenizer, model, load_report


def _no_safetensors(exc: BaseException) -> bool:
    """transformers' answer to ``use_safetensors=True`` for a model without .safetensors weights
    (a hub model with a pickle checkpoint only; local folders are checked before loading)."""
    text = str(exc)
    return "safetensors" in text and ("no file named" in text or "does not appear to have" in text)


def _probe_split(model: Any, tokenizer: Any, kind: str) -> tuple[Any, Any]:
    """(base, head) if applying the head to gathered hidden states equals the full forward."""
    import torch

    if kind == "nsp":
        return None, None
    base = model.base_model
    head = next((getattr(model, n) for n in ("cls", "lm_head", "predictions") if isinstance(getattr(model, n, None), torch.nn.Module)), None)
    if base is model or head is None:
        return None, None
    ids = torch.tensor([tokenizer.encode("The quick brown fox jumps over the lazy dog.")], device=model.device)
    kwargs: dict[str, Any] = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if kind == "causal":
        kwargs["use_cache"] = False
    try:
        with torch.inference_mode():
            full = model(**kwargs).logits.float()
            split = head(base(**kwargs).last_hidden_state).float()
    except Exception:  # noqa: BLE001 - any failure just means "use the full forward pass"
        return None, None
    tol = 1e-4 if model.dtype == torch.float32 else 2e-2
    if split.shape != full.shape or not torch.allclose(split, full, rtol=tol, atol=tol * float(full.abs().max())):
        return None, None
    return base, head


def _state_dict_sha256(model: Any) -> str:
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().float().cpu().numpy().tobytes())
    return h.hexdigest()


def _placement(net: Any) -> dict[str, str]:
    """Where accelerate put each part (``hf_device_map``; ``{"": device}`` when all is on one device)."""
    placed = getattr(net, "hf_device_map", None) or {"": str(next(net.parameters()).device)}
    return {str(k): str(v) for k, v in placed.items()}


def load_backend(model: str, *, kind: str, device: str | None = "auto", dtype: str | None = None,
                 revision: str | None = None, memo: HashMemo | None = None, load_from: str | None = None,
                 device_map: str = "none") -> Backend:
    """Load (or reuse) ``model`` as a ``kind`` backend; see the module docstring.

    ``load_from``: a local folder holding ``model``'s files (a cluster node's own copy); the
    files are read (and hashed) there while the identity — cache keys, provenance id — stays
    ``model``'s. None: load ``model`` itself.
    ``dtype="auto"``: the checkpoint's bf16 on CUDA, else fp32 (:func:`choose_dtype`).
    ``device_map="auto"``: accelerate places the layers over the GPUs (then CPU memory); inputs
    go to the device of the input embeddings, which is then ``Backend.device``.
    """
    import os

    if kind not in MODEL_KINDS:
        raise ScoringError(f"unknown model kind {kind!r}; known: {', '.join(MODEL_KINDS)}")
    if device_map not in ("none", "auto"):
        raise ScoringError(f"device_map must be one of none, auto, got {device_map!r}")
    limit_onednn_cache()  # before the first forward pass (the probes below): a cached primitive pins the heap
    dev = resolve_device(device)
    files, files_revision = (load_from, None) if load_from else (model, revision)
    dtype, dtype_choice = choose_dtype(dtype, dev, checkpoint_dtype(files, files_revision) if dtype == "auto" else None)
    dt = resolve_dtype(dtype, dev)
    key = (model, kind, str(dev), str(dt), revision, load_from, device_map)
    if key in _LOADED:
        _LOADED.move_to_end(key)
        return _LOADED[key]
    check_model_source(files, kind, files_revision)
    tokenizer, net, report = _load(files, kind, dev, dt, files_revision, device_map)
    if device_map == "auto":
        dev = net.get_input_embeddings().weight.device
    limit = position_limit(net)
    max_len = tokenizer.model_max_length if tokenizer.model_max_length < _NO_LIMIT else (limit or _NO_LIMIT)
    if limit is not None:
        max_len = min(max_len, limit)
    tokenizer.model_max_length = max_len
    base, head = _probe_split(net, tokenizer, kind)
    hidden_at = probe_last_layer(base, tokenizer, dev, dt) if kind == "masked" and base is not None else None
    info = fingerprint(files, revision, memo=memo, state_dict_hash=lambda: _state_dict_sha256(net))
    info.update({
        "model_id": model,
        "model_id_resolved": os.path.abspath(model) if os.path.isdir(model) else model,
        "model_class": type(net).__name__,
        "kind": kind,
        "load_report": report,
        "head_split": base is not None,
        "last_layer_at_scored_positions": hidden_at is not None,
        "n_parameters": sum(p.numel() for p in net.parameters()),
        "dtype_choice": dtype_choice,
        "device_map": _placement(net) if device_map == "auto" else None,
    })
    backend = Backend(model, kind, net, TokenizerView(tokenizer, model, max_len), dev, dt, base, head, hidden_at, info)
    _LOADED[key] = backend
    while len(_LOADED) > _KEEP:
        _LOADED.popitem(last=False)
    return backend
