"""Batched forward passes: padded inputs in, gathered natural-log probabilities out.

One interface for every model kind: :meth:`Scorer.launch` takes deduplicated
:class:`~stereoset_eval.scoring.requests.BatchRow` objects (right-padded into one batch with an attention
mask), queues their forward pass and returns a handle whose ``result()`` gives, per row, the
log-probabilities of its ``(position, target)`` gathers (on CUDA the batch's only wait for the
device, so the engine can prepare and queue the next commit group first):

* masked / causal LMs: ``log_softmax(logits[position])[target]``, computed in float32 from
  the head applied to the gathered positions only (in chunks, so a 128k vocabulary never
  materialises a ``batch × length × vocab`` tensor) — or from the full forward pass for
  models whose head cannot be split; for BERT-family masked LMs the last encoder layer, too,
  runs at the gathered positions only (:mod:`stereoset_eval.scoring.last_layer`) unless told otherwise;
* next-sentence heads: ``log_softmax(nsp_logits)[target]`` (position ignored).

Everything runs under ``torch.inference_mode()``.
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from stereoset_eval.scoring.backends import Backend
from stereoset_eval.scoring.copies import CopyBatch
from stereoset_eval.scoring.requests import BatchRow, Done, gather_arrays
from stereoset_eval.scoring.table import TableBatch

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
        """The padded batch as the model's inputs on the device (:meth:`_host_inputs`, moved by :meth:`_to_device`)."""
        host = self._host_inputs(rows)
        return self._model_inputs(host, self._to_device(list(host.values())))

    def _host_inputs(self, rows: Sequence[BatchRow]) -> dict[str, Any]:
        """The padded batch as host arrays (``input_ids``, optional ``attention_mask`` and
        ``token_type_ids``), built with array operations.

        No attention mask when no row is padded (a batch of one length, the common case after
        length bucketing): the mask would be all ones, and without it the attention kernels skip
        the masking work.
        """
        import numpy as np

        lengths = np.fromiter((len(r.input_ids) for r in rows), dtype=np.int64, count=len(rows))
        width = int(lengths.max())
        padded = bool((lengths != width).any())
        if padded:
            ids: np.ndarray = np.full((len(rows), width), self.pad_id, dtype=np.int64)
            for i, r in enumerate(rows):
                ids[i, :len(r.input_ids)] = r.input_ids
        else:  # one length: fill the array straight from the tuples (np.array over a list of tuples is ~2x slower)
            ids = np.fromiter(itertools.chain.from_iterable(r.input_ids for r in rows), dtype=np.int64,
                              count=len(rows) * width).reshape(len(rows), width)
        host = {"input_ids": ids}
        if padded:
            host["attention_mask"] = (np.arange(width)[None, :] < lengths[:, None]).astype(np.int64)
        if any(r.token_type_ids is not None for r in rows):
            types = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                if r.token_type_ids is not None:
                    types[i, :len(r.token_type_ids)] = r.token_type_ids
            host["token_type_ids"] = types
        return host

    def _model_inputs(self, host: dict[str, Any], tensors: Sequence[Any]) -> dict[str, Any]:
        """The model's keyword inputs: ``host``'s names with ``tensors`` (their arrays on the device)."""
        out: dict[str, Any] = dict(zip(host, tensors))
        if self.backend.kind == "causal":
            out["use_cache"] = False
        return out

    def _to_device(self, arrays: Sequence[Any]) -> list[Any]:
        """Host arrays as tensors on the model's device: on a CPU the arrays themselves (no copy);
        on CUDA one pinned buffer and one copy without blocking for all of them (:func:`one_transfer`)."""
        torch = self.torch
        dev = self.backend.device
        if dev.type == "cuda":
            return one_transfer(torch, arrays, dev, pin=True)
        return [torch.from_numpy(a) for a in arrays]

    @property
    def asynchronous(self) -> bool:
        """True if :meth:`launch` returns before the device has finished (CUDA): only then can
        host work overlap the forward passes."""
        return self.backend.device.type == "cuda"

    def launch(self, rows: Sequence[BatchRow]) -> "Done | OnDevice":
        """Queue the batch's forward pass; ``result()`` of the handle gives, per row, the
        log-probabilities of ``row.gather`` in order.

        For language models the values stay on the device until ``result()`` (one copy per batch,
        the batch's only synchronisation); next-sentence heads are read at once.
        """
        if not rows:
            return Done([])
        with self.torch.inference_mode():
            if isinstance(rows, CopyBatch):  # masked copies: the batch's arrays come from the copy table
                return OnDevice(self._run_copies(rows), rows, rows.gathers is None)
            if isinstance(rows, TableBatch):  # a request table's rows: the batch's arrays come from the table
                return OnDevice(self._run_table(rows), rows)
            if self.backend.kind == "nsp":
                return Done(self._run_nsp(rows))
            single = all(len(r.gather) == 1 for r in rows)  # one gather per row (pll, crows-nangia, stereoset-mlm)
            return OnDevice(self._run_lm(rows, single), rows, single)

    def _run_nsp(self, rows: Sequence[BatchRow]) -> list[list[float]]:
        logits = self.backend.model(**self._inputs(rows)).logits.float()
        logp = self.torch.log_softmax(logits, dim=-1).cpu()
        return [[float(logp[b, target]) for _, target in row.gather] for b, row in enumerate(rows)]

    def _run_copies(self, batch: CopyBatch) -> Any:
        """A batch of masked copies (one gather per row): inputs and gathers built with array operations."""
        import numpy as np

        ids, attention, types, positions, gather_rows, targets = batch.arrays(self.pad_id)
        host = {"input_ids": ids}
        if attention is not None:
            host["attention_mask"] = attention
        if types is not None:
            host["token_type_ids"] = np.ascontiguousarray(types)
        order = np.arange(len(ids), dtype=np.int64)
        return self._gathered(host, order, np.ascontiguousarray(positions),
                              order if gather_rows is None else np.ascontiguousarray(gather_rows),
                              np.ascontiguousarray(targets), len(ids), True)

    def _run_table(self, batch: TableBatch) -> Any:
        """A batch of a request table's inputs: inputs and gathers built with array operations."""
        import numpy as np

        ids, attention, types, pair_rows, pair_pos, g_pair, g_target = batch.arrays(self.pad_id)
        host = {"input_ids": ids}
        if attention is not None:
            host["attention_mask"] = attention
        if types is not None:
            host["token_type_ids"] = types
        one_per_row = len(pair_rows) == len(ids) and bool((pair_rows == np.arange(len(ids))).all())
        return self._gathered(host, pair_rows, pair_pos, g_pair, g_target, len(pair_rows), one_per_row)

    def _run_lm(self, rows: Sequence[BatchRow], single: bool) -> Any:
        """Every row's gathers, in row order, as one float32 tensor on the device (``single``: every
        row has one gather, so the gather arrays are built at once)."""
        import numpy as np

        n = len(rows)
        if single:
            first = np.fromiter(itertools.chain.from_iterable(r.gather[0] for r in rows), dtype=np.int64,
                                count=2 * n).reshape(n, 2)
            order: np.ndarray = np.arange(n, dtype=np.int64)
            pair_rows_np, pair_pos_np, g_pair_np, g_target_np = order, first[:, 0].copy(), order, first[:, 1].copy()
            n_pairs, one_per_row = n, True
        else:
            pair_rows_np, pair_pos_np, g_pair_np, g_target_np = gather_arrays(rows)
            n_pairs = len(pair_rows_np)
            one_per_row = n_pairs == n and bool((pair_rows_np == np.arange(n, dtype=np.int64)).all())
        return self._gathered(self._host_inputs(rows), pair_rows_np, pair_pos_np, g_pair_np, g_target_np, n_pairs,
                              one_per_row)

    def _gathered(self, host: dict[str, Any], pair_rows_np: Any, pair_pos_np: Any, g_pair_np: Any, g_target_np: Any,
                  n_pairs: int, one_per_row: bool) -> Any:
        """The log-probabilities of the gathers (pair index and target each) read at the distinct
        ``(row, position)`` pairs, in gather order, as one float32 tensor on the device. ``host``:
        the batch's input arrays (:meth:`_host_inputs`), moved to the device with the gather
        arrays in one transfer."""
        torch = self.torch
        dev = self.backend.device
        moved = self._to_device([*host.values(), pair_rows_np, pair_pos_np, g_pair_np, g_target_np])
        inputs = self._model_inputs(host, moved[:len(host)])
        pair_rows, pair_pos, pairs, targets = moved[len(host):]
        hidden = self.backend.states_at(inputs, pair_rows, pair_pos, one_per_row=one_per_row,
                                        last_layer_at_scored=self.last_layer_at_scored)
        head = self.backend.head
        if hidden.device != dev:  # device_map="auto": the last layers live on another device
            pairs, targets = pairs.to(hidden.device), targets.to(hidden.device)
        # log_softmax, one fused kernel: torch.logsumexp is several passes over the logits (max,
        # subtract, exp, sum), which made the head 1.5x as dear at GPT-2's vocabulary (issue 35)
        if n_pairs <= HEAD_CHUNK:  # one head application (the common case): no selection masks
            logits = (head(hidden) if head is not None else hidden).float()
            return torch.log_softmax(logits, dim=-1)[pairs, targets]
        values = torch.empty(len(g_pair_np), dtype=torch.float32, device=hidden.device)
        starts = range(0, n_pairs, HEAD_CHUNK)
        cuts = _chunk_cuts(g_pair_np, [*starts, n_pairs])
        for k, start in enumerate(starts):
            stop = min(start + HEAD_CHUNK, n_pairs)
            chunk = hidden[start:stop]
            logp = torch.log_softmax((head(chunk) if head is not None else chunk).float(), dim=-1)
            if cuts is not None:  # the chunk's gathers are one run of them: slices, no selection masks
                lo, hi = cuts[k], cuts[k + 1]
                values[lo:hi] = logp[pairs[lo:hi] - start, targets[lo:hi]]
                continue
            sel = (pairs >= start) & (pairs < stop)
            values[sel] = logp[pairs[sel] - start, targets[sel]]
        return values


def _chunk_cuts(g_pair: Any, bounds: Sequence[int]) -> list[int] | None:
    """Where the gathers of each head chunk ``bounds[k] .. bounds[k + 1] - 1`` begin and end, when the
    gathers' pairs never decrease (pairs are numbered in order of first use, so they do unless an input
    is read by two units, e.g. a sentence two StereoSet examples share: 10 of tiny-gpt2's 13
    ``stereoset-causal`` batches over the dev set); None otherwise.

    >>> import numpy as np
    >>> _chunk_cuts(np.array([0, 0, 1, 2, 2, 3]), [0, 2, 4]), _chunk_cuts(np.array([1, 0]), [0, 2])
    ([0, 3, 6], None)
    """
    import numpy as np

    if len(g_pair) > 1 and bool((g_pair[1:] < g_pair[:-1]).any()):
        return None
    return np.searchsorted(g_pair, bounds).tolist()


def one_transfer(torch: Any, arrays: Sequence[Any], device: Any, *, pin: bool) -> list[Any]:
    """``arrays`` (numpy, int64) as tensors on ``device`` through one host buffer (pinned if
    ``pin``) and one copy without blocking: each tensor a view of the copied buffer, in the array's
    shape. A batch's inputs and gather indices were four to seven pinned copies, each with its own
    fixed cost (issue 35: a fixture model's run on a GPU launches ~200 batches). Arrays of another
    dtype go one by one, as they are."""
    import numpy as np

    if not all(a.dtype == np.int64 for a in arrays):
        return [torch.from_numpy(np.ascontiguousarray(a)).pin_memory().to(device, non_blocking=True) if pin
                else torch.from_numpy(a).to(device) for a in arrays]
    sizes = [int(a.size) for a in arrays]
    staged = torch.empty(sum(sizes), dtype=torch.int64, pin_memory=pin)
    flat = staged.numpy()
    start = 0
    for a, n in zip(arrays, sizes):
        flat[start:start + n] = a.reshape(-1)
        start += n
    moved = staged.to(device, non_blocking=True)
    out, start = [], 0
    for a, n in zip(arrays, sizes):
        out.append(moved[start:start + n].view(a.shape))
        start += n
    return out


class OnDevice:
    """A language-model batch whose values are still on the device (:meth:`Scorer.launch`);
    ``single``: every row has one gather (its value alone is the row's list)."""

    __slots__ = ("_values", "_rows", "_single")

    def __init__(self, values: Any, rows: Sequence[BatchRow], single: bool = False) -> None:
        self._values, self._rows, self._single = values, rows, single

    def result(self) -> list[list[float]]:
        """Per row, its gathers' log-probabilities (copies the values to the host: on CUDA this waits)."""
        flat = self._values.cpu().tolist()
        return [[v] for v in flat] if self._single else _split(flat, self._rows)

    def flat(self) -> list[float]:
        """Every row's gathers in row order, as one list (:meth:`result` without the cut into rows)."""
        return self._values.cpu().tolist()

    def array(self) -> Any:
        """:meth:`flat` as a float32 numpy array (on the host; on CUDA this waits)."""
        return self._values.cpu().numpy()


def _split(flat: list[float], rows: Sequence[BatchRow]) -> list[list[float]]:
    """``flat`` (every row's gathers, in order) cut into one list per row."""
    out, k = [], 0
    for row in rows:
        n = len(row.gather)
        out.append(flat[k:k + n])
        k += n
    return out
