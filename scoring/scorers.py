"""Batched forward passes: padded inputs in, gathered natural-log probabilities out.

One interface for every model kind: :meth:`Scorer.run` takes deduplicated
:class:`~stereoset_eval.scoring.requests.BatchRow` objects (right-padded into one batch with an attention
mask) and returns, per row, the log-probabilities of its ``(position, target)`` gathers:

* masked / causal LMs: ``log_softmax(logits[position])[target]``, computed in float32 from
  the head applied to the gathered positions only (in chunks, so a 128k vocabulary never
  materialises a ``batch × length × vocab`` tensor) — or from the full forward pass for
  models whose head cannot be split; for BERT-family masked LMs the last encoder layer, too,
  runs at the gathered positions only (:mod:`stereoset_eval.scoring.last_layer`) unless told otherwise;
* next-sentence heads: ``log_softmax(nsp_logits)[target]`` (position ignored).

Everything runs under ``torch.inference_mode()``.
"""

from __future__ import annotations

from typing import Any, Sequence

from stereoset_eval.scoring.backends import Backend
from stereoset_eval.scoring.requests import BatchRow, gather_index, one_pair_per_row

HEAD_CHUNK = 1024  # gathered positions per head application


class Scorer:
    """Runs batches for one :class:`~stereoset_eval.scoring.backends.Backend`.

    ``last_layer_at_scored``: use the backend's ``hidden_at`` (last layer at the scored
    positions only) where it has one (:meth:`Backend.states_at`); ``last_layer`` says which
    path runs, for the provenance.
    """

    def __init__(self, backend: Backend, *, last_layer_at_scored: bool = True) -> None:
        import torch

        from stereoset_eval.scoring.last_layer import ALL_POSITIONS, SCORED_POSITIONS

        self.torch = torch
        self.backend = backend
        self.last_layer_at_scored = last_layer_at_scored
        restricted = last_layer_at_scored and backend.head is not None and backend.hidden_at is not None
        self.last_layer = SCORED_POSITIONS if restricted else ALL_POSITIONS
        tok = backend.tokenizer
        pad = tok.special_id("pad")
        if pad is None:  # GPT-2 has no pad token; padded positions are masked out anyway
            eos = tok.special_id("eos")
            pad = eos if eos is not None else 0
        self.pad_id = int(pad)

    def _inputs(self, rows: Sequence[BatchRow]) -> dict[str, Any]:
        torch = self.torch
        width = max(len(r.input_ids) for r in rows)
        pads = [width - len(r.input_ids) for r in rows]
        dev = self.backend.device
        out = {
            "input_ids": torch.tensor([list(r.input_ids) + [self.pad_id] * p for r, p in zip(rows, pads)], device=dev),
            "attention_mask": torch.tensor([[1] * len(r.input_ids) + [0] * p for r, p in zip(rows, pads)], device=dev),
        }
        if any(r.token_type_ids is not None for r in rows):
            out["token_type_ids"] = torch.tensor(
                [list(r.token_type_ids or (0,) * len(r.input_ids)) + [0] * p for r, p in zip(rows, pads)], device=dev)
        if self.backend.kind == "causal":
            out["use_cache"] = False
        return out

    def run(self, rows: Sequence[BatchRow]) -> list[list[float]]:
        """Per row, the log-probabilities of ``row.gather`` in order."""
        if not rows:
            return []
        with self.torch.inference_mode():
            if self.backend.kind == "nsp":
                return self._run_nsp(rows)
            return self._run_lm(rows)

    def _run_nsp(self, rows: Sequence[BatchRow]) -> list[list[float]]:
        logits = self.backend.model(**self._inputs(rows)).logits.float()
        logp = self.torch.log_softmax(logits, dim=-1).cpu()
        return [[float(logp[b, target]) for _, target in row.gather] for b, row in enumerate(rows)]

    def _run_lm(self, rows: Sequence[BatchRow]) -> list[list[float]]:
        torch = self.torch
        pair_index, g_pair, g_target = gather_index(rows)
        dev = self.backend.device
        pair_rows = torch.tensor([b for b, _ in pair_index], dtype=torch.long, device=dev)
        pair_pos = torch.tensor([p for _, p in pair_index], dtype=torch.long, device=dev)
        inputs = self._inputs(rows)
        one_per_row = one_pair_per_row(pair_index, len(rows))
        hidden = self.backend.states_at(inputs, pair_rows, pair_pos, one_per_row=one_per_row,
                                        last_layer_at_scored=self.last_layer_at_scored)
        head = self.backend.head
        pairs = torch.tensor(g_pair, dtype=torch.long, device=dev)
        targets = torch.tensor(g_target, dtype=torch.long, device=dev)
        values = torch.empty(len(g_pair), dtype=torch.float32, device=dev)
        for start in range(0, len(pair_index), HEAD_CHUNK):
            stop = min(start + HEAD_CHUNK, len(pair_index))
            chunk = hidden[start:stop]
            logits = (head(chunk) if head is not None else chunk).float()
            lse = torch.logsumexp(logits, dim=-1)
            sel = (pairs >= start) & (pairs < stop)
            local = pairs[sel] - start
            values[sel] = logits[local, targets[sel]] - lse[local]
        flat = values.cpu().tolist()
        out, k = [], 0
        for row in rows:
            out.append(flat[k:k + len(row.gather)])
            k += len(row.gather)
        return out
