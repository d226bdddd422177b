"""Run a BERT-family encoder's last layer only at the positions a method scores.

A masked-LM method reads the output head at one position per masked copy, yet a plain forward
pass runs the whole last layer at every position. Only its keys and values need every
position; its query projection, attention, output projection and feed-forward block are
needed at the scored positions alone. Skipping the rest saves about 7 % of a BERT-base-sized
forward pass (most of one layer in twelve). The numbers differ by float32 rounding only,
because matrix products of other shapes sum in another order.

How: a forward pre-hook on the last layer captures its input (hidden states and the attention
mask the model built) and stops the pass there; the layer's own modules are then applied to
the scored positions, with the model's own attention function (eager or sdpa, whichever the
model was loaded with). It applies to encoder layers shaped like BERT's (BERT, RoBERTa,
XLM-R, CamemBERT, ELECTRA, …) and only when a probe at load time, on a padded batch with
several positions per row, agrees with the full forward pass; any other model keeps the
plain path. Which path ran is in the provenance (``run.last_layer``).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

SCORED_POSITIONS = "scored positions"  # provenance values of run.last_layer
ALL_POSITIONS = "all positions"


class _Captured(Exception):
    """Carries the last layer's input out of the base model's forward pass."""

    def __init__(self, hidden: Any, mask: Any) -> None:
        super().__init__("last-layer input captured")
        self.hidden, self.mask = hidden, mask


def _capture(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    hidden = args[0] if args else kwargs["hidden_states"]
    mask = args[1] if len(args) > 1 else kwargs.get("attention_mask")
    raise _Captured(hidden, mask)


class LastLayerAtPositions:
    """``hidden_at(inputs, rows, positions)``: final hidden states at ``(rows[i], positions[i])``.

    Equals ``base(**inputs).last_hidden_state[rows, positions]`` up to float32 rounding.
    ``one_per_row``: the caller knows ``rows`` is ``0, 1, …, batch-1`` (saves a device sync).
    """

    def __init__(self, base: Any, layer: Any, attention: Callable[..., Any]) -> None:
        self.base, self.layer, self.attention = base, layer, attention

    def __call__(self, inputs: dict[str, Any], rows: Any, positions: Any, *, one_per_row: bool | None = None) -> Any:
        handle = self.layer.register_forward_pre_hook(_capture, with_kwargs=True)
        try:
            self.base(**inputs)
        except _Captured as captured:
            hidden, mask = captured.hidden, captured.mask
        else:
            raise RuntimeError("the model's last encoder layer did not run")
        finally:
            handle.remove()
        if one_per_row is None:
            one_per_row = len(rows) == hidden.shape[0] and bool((rows == self._arange(len(rows), rows.device)).all())
        return self._layer_at(hidden, mask, rows, positions, one_per_row)

    def _layer_at(self, hidden: Any, mask: Any, rows: Any, positions: Any, one_per_row: bool) -> Any:
        """The last layer's output at the given positions; each position is its own query."""
        layer, sa = self.layer, self.layer.attention.self
        length = hidden.shape[1]
        n_heads, head_size = sa.num_attention_heads, sa.attention_head_size

        def heads(x: Any) -> Any:  # [n, L, H] -> [n, heads, L, head_size]
            return x.view(x.shape[0], x.shape[1], n_heads, head_size).transpose(1, 2)

        key, value = sa.key(hidden), sa.value(hidden)
        if not one_per_row:  # each scored position attends over its own row's keys and values
            key, value = key.index_select(0, rows), value.index_select(0, rows)
        at = hidden[rows, positions].unsqueeze(1)  # [P, 1, H]
        query = heads(sa.query(at))
        if mask is not None:
            mask = mask.index_select(0, rows) if not one_per_row else mask
            if mask.dim() == 4 and mask.shape[-2] == length:  # per-query mask rows: keep the scored ones
                mask = mask[self._arange(len(rows), rows.device), :, positions].unsqueeze(-2)
        attended, _ = self.attention(sa, query, heads(key), heads(value), mask, dropout=0.0, scaling=sa.scaling)
        attended = attended.reshape(len(rows), 1, -1)
        out = layer.feed_forward_chunk(layer.attention.output(attended, at))
        return out.squeeze(1)

    @staticmethod
    def _arange(n: int, device: Any) -> Any:
        import torch

        return torch.arange(n, device=device)


def _bert_like_last_layer(base: Any) -> Any | None:
    """The last encoder layer if it is shaped like BERT's (self-attention, output, feed-forward)."""
    import torch

    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0:
        return None
    layer = layers[-1]
    attention = getattr(layer, "attention", None)
    sa = getattr(attention, "self", None)
    if sa is None or getattr(layer, "is_decoder", False) or getattr(sa, "is_causal", False):
        return None
    if not all(isinstance(getattr(sa, n, None), torch.nn.Linear) for n in ("query", "key", "value")):
        return None
    if not (callable(getattr(attention, "output", None)) and callable(getattr(layer, "feed_forward_chunk", None))
            and isinstance(getattr(sa, "attention_head_size", None), int)
            and isinstance(getattr(sa, "num_attention_heads", None), int) and hasattr(sa, "scaling")
            and hasattr(sa, "config")):
        return None
    if getattr(sa.config, "position_embedding_type", "absolute") not in (None, "absolute"):
        return None  # relative position scores are added inside the attention: not reproduced here
    return layer


def _attention_function(sa: Any) -> Callable[..., Any] | None:
    """The attention function the self-attention module itself would call."""
    module = importlib.import_module(type(sa).__module__)
    eager = getattr(module, "eager_attention_forward", None)
    if eager is None:
        return None
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    return ALL_ATTENTION_FUNCTIONS.get_interface(sa.config._attn_implementation, eager)


def probe_last_layer(base: Any, tokenizer: Any, device: Any, dtype: Any) -> LastLayerAtPositions | None:
    """A :class:`LastLayerAtPositions` for ``base`` if it applies and agrees with the full pass, else None.

    The probe: two sentences of different lengths (so the shorter is padded) with several
    positions per row, against ``base(**inputs).last_hidden_state`` at the same positions.
    """
    import torch

    layer = _bert_like_last_layer(base)
    if layer is None:
        return None
    try:
        attention = _attention_function(layer.attention.self)
    except Exception:  # noqa: BLE001 - unknown attention setup: keep the plain path
        return None
    if attention is None:
        return None
    texts = ["The quick brown fox jumps over the lazy dog.", "She was a nurse."]
    encoded = [tokenizer.encode(t) for t in texts]
    width = max(len(e) for e in encoded)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    inputs = {"input_ids": torch.tensor([e + [pad] * (width - len(e)) for e in encoded], device=device),
              "attention_mask": torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in encoded], device=device)}
    rows = torch.tensor([0, 0, 0, 1, 1], device=device)
    positions = torch.tensor([1, 4, width - 1, 0, len(encoded[1]) - 1], device=device)
    runner = LastLayerAtPositions(base, layer, attention)
    try:
        with torch.inference_mode():
            final = base(**inputs).last_hidden_state.float()
            full, single_full = final[rows, positions], final[[0, 1], [2, 3]]
            fast = runner(inputs, rows, positions).float()
            single = runner(inputs, torch.tensor([0, 1], device=device), torch.tensor([2, 3], device=device)).float()
    except Exception:  # noqa: BLE001 - any failure just means "use the plain path"
        return None
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    for got, want in ((fast, full), (single, single_full)):
        if got.shape != want.shape or not torch.allclose(got, want, rtol=tol, atol=tol * float(want.abs().max())):
            return None
    return runner
