"""Requests as arrays: many units' forward inputs interned as ints, their gathers as int arrays.

The methods that read whole inputs (``stereoset-mlm``'s masked contexts, ``stereoset-causal``'s
sentences) made one :class:`~stereoset_eval.scoring.requests.Request` per input and one
:class:`~stereoset_eval.scoring.methods.base.Prepared` per sentence, which the engine then merged,
grouped, batched, read back and cut into per-request lists in Python, object by object: host work
per sentence that a GPU's forward passes no longer hide, and most of what those cells spend beyond
the forward passes and the tokenizer on a CPU (issue 35). A :class:`RequestTable` holds the same
requests for every unit of a run at once:

* ``inputs``: the distinct inputs ``(input ids, token type ids)``, each an int *code* (its index);
* per gather (a ``(position, target)`` read): its input's code, position and target, in unit order
  and, within a unit, in request order (``g_input``, ``g_pos``, ``g_target``);
* where each unit's gathers and each request's gathers start (``unit_offsets``, ``request_offsets``
  and ``unit_requests``), so that the per-unit :class:`Request` objects can still be made on
  demand (:meth:`RequestTable.requests`) for every reader of ``Prepared.requests``.

:class:`~stereoset_eval.scoring.engine_rows.TableRows` runs it: the same commit groups, the same
rows in the same order, the same batches and the same gathers as the request path, so the same
numbers (``tests/test_request_table.py`` checks both paths against each other).
"""

from __future__ import annotations

import itertools
import operator
from typing import Any, Iterable, Iterator, Sequence, overload

from stereoset_eval.scoring.requests import BatchRow, InputKey, Request, first_use_pairs

_IDS, _TYPES = operator.itemgetter(0), operator.itemgetter(1)  # of an input key (input ids, token type ids)


class RequestTable:
    """Every unit's requests as arrays (see the module docstring). Treat as immutable."""

    def __init__(self, inputs: list[InputKey], g_input: Any, g_pos: Any, g_target: Any, request_offsets: Any,
                 unit_requests: Any) -> None:
        import numpy as np

        self.inputs = inputs
        self.g_input, self.g_pos, self.g_target = g_input, g_pos, g_target
        self.request_offsets = request_offsets  # request r's gathers: [request_offsets[r], request_offsets[r + 1])
        self.unit_requests = unit_requests  # unit i's requests: [unit_requests[i], unit_requests[i + 1])
        self.unit_offsets = request_offsets[unit_requests]  # unit i's gathers
        self.lengths = np.fromiter(map(len, map(_IDS, inputs)), dtype=np.int64, count=len(inputs))
        self._matrix: tuple[Any, Any] | None = None
        self._unit_longest: Any = None

    @property
    def n_units(self) -> int:
        return len(self.unit_requests) - 1

    def unit_longest(self) -> Any:
        """Tokens of each unit's longest input (0 for a unit without requests)."""
        if self._unit_longest is None:
            import numpy as np

            longest = np.zeros(self.n_units, dtype=np.int64)
            gathers = self.lengths[self.g_input]
            nonempty = self.unit_offsets[1:] > self.unit_offsets[:-1]
            if gathers.size:
                longest[nonempty] = np.maximum.reduceat(gathers, self.unit_offsets[:-1][nonempty])
            self._unit_longest = longest
        return self._unit_longest

    def requests(self, unit: int) -> list[Request]:
        """Unit ``unit``'s requests as :class:`Request` objects (the general form)."""
        lo, hi = int(self.unit_requests[unit]), int(self.unit_requests[unit + 1])
        bounds = self.request_offsets[lo:hi + 1].tolist()
        out = []
        for start, stop in zip(bounds, bounds[1:]):
            ids, types = self.inputs[int(self.g_input[start])]
            out.append(Request(ids, tuple(zip(self.g_pos[start:stop].tolist(), self.g_target[start:stop].tolist())), types))
        return out

    def matrix(self) -> tuple[Any, Any]:
        """(every input's ids ``[inputs, longest]`` padded with -1, token types matrix or None),
        built with array operations once per table."""
        if self._matrix is None:
            import numpy as np

            lengths = self.lengths
            total = int(lengths.sum())
            width = int(lengths.max()) if len(lengths) else 0
            ids = np.full((len(lengths), width), -1, dtype=np.int64)
            # a boolean mask of each row's first lengths[k] cells, filled in row-major order: the ids
            # in input order (a third of the time of indexing by row and column arrays, issue 35)
            ids[np.arange(width) < lengths[:, None]] = np.fromiter(
                itertools.chain.from_iterable(map(_IDS, self.inputs)), dtype=np.int64, count=total)
            types = None
            if any(map(operator.is_not, map(_TYPES, self.inputs), itertools.repeat(None))):
                types = np.zeros((len(lengths), width), dtype=np.int64)
                for k, (_, row_types) in enumerate(self.inputs):
                    if row_types is not None:
                        types[k, :len(row_types)] = row_types
            self._matrix = ids, types
        return self._matrix


class TableBatch(Sequence[BatchRow]):
    """A batch of a :class:`RequestTable`'s inputs (codes) with the gathers read from them.

    Attributes:
        codes: the batch's inputs, one row each (int64 array).
        entries: the table's gathers the batch reads, grouped by row in row order (int64 array).
        entry_rows: the row of each of ``entries``.

    As a sequence it is the batch's rows, one :class:`BatchRow` each made on demand, so a launcher
    that takes rows (the fake model, a test's) runs it unchanged; the real scorer uses :meth:`arrays`.
    """

    __slots__ = ("table", "codes", "entries", "entry_rows")

    def __init__(self, table: RequestTable, codes: Any, entries: Any, entry_rows: Any) -> None:
        self.table = table
        self.codes = codes
        self.entries = entries
        self.entry_rows = entry_rows

    @property
    def read_codes(self) -> Any:
        """The table's gathers whose values the batch's launch returns, in order."""
        return self.entries

    def __len__(self) -> int:
        return len(self.codes)

    @overload
    def __getitem__(self, index: int) -> BatchRow: ...

    @overload
    def __getitem__(self, index: slice) -> "TableBatch": ...

    def __getitem__(self, index: int | slice) -> "BatchRow | TableBatch":
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self.codes))
            if step != 1:
                raise ValueError("a table batch is sliced in order (step 1)")
            lo, hi = (int(k) for k in self.entry_rows.searchsorted([start, stop]))
            return TableBatch(self.table, self.codes[start:stop], self.entries[lo:hi], self.entry_rows[lo:hi] - start)
        i = index % len(self.codes)
        lo, hi = (int(k) for k in self.entry_rows.searchsorted([i, i + 1]))
        ids, types = self.table.inputs[int(self.codes[i])]
        entries = self.entries[lo:hi]
        return BatchRow(ids, types, tuple(zip(self.table.g_pos[entries].tolist(), self.table.g_target[entries].tolist())))

    def __iter__(self) -> Iterator[BatchRow]:
        return (self[i] for i in range(len(self.codes)))

    def arrays(self, pad_id: int) -> tuple[Any, Any, Any, Any, Any, Any, Any]:
        """``(input ids [rows, width], attention mask or None, token types or None, pair rows, pair
        positions, each gather's pair, each gather's target)``: the padded inputs (no mask where no
        row is padded) and the distinct ``(row, position)`` pairs in order of first use, as
        :func:`~stereoset_eval.scoring.requests.gather_arrays` gives them for the same rows."""
        import numpy as np

        matrix, types = self.table.matrix()
        row_lengths = self.table.lengths[self.codes]
        width = int(row_lengths.max())
        ids = matrix[self.codes, :width]  # fancy indexing: a copy
        attention = None
        if bool((row_lengths != width).any()):
            attention = (np.arange(width)[None, :] < row_lengths[:, None]).astype(np.int64)
            ids[ids < 0] = pad_id
        token_types = np.ascontiguousarray(types[self.codes, :width]) if types is not None else None
        pair_rows, pair_pos, g_pair = first_use_pairs(self.entry_rows, self.table.g_pos[self.entries])
        return ids, attention, token_types, pair_rows, pair_pos, g_pair, np.ascontiguousarray(self.table.g_target[self.entries])


def concatenated(sequences: Sequence[Sequence[int]]) -> tuple[Any, Any, Any]:
    """``(lengths, first offsets, every element in order)`` of ``sequences`` as int64 arrays: the
    per-token layout the causal methods build their gathers from."""
    import numpy as np

    lengths = np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))
    firsts = np.cumsum(lengths) - lengths
    flat = np.fromiter(itertools.chain.from_iterable(sequences), dtype=np.int64, count=int(lengths.sum()))
    return lengths, firsts, flat


def unit_entries(table: RequestTable, units: Iterable[int]) -> Any:
    """The table's gathers of ``units``, unit by unit in order (an int64 array), with array operations."""
    return offsets_entries(table.unit_offsets, units)


def offsets_entries(offsets: Any, units: Iterable[int]) -> Any:
    """The entries ``offsets[u] .. offsets[u + 1] - 1`` of each of ``units``, unit by unit in order
    (an int64 array), with array operations.

    >>> import numpy as np
    >>> offsets_entries(np.array([0, 2, 2, 5]), [2, 0, 1]).tolist()
    [2, 3, 4, 0, 1]
    """
    import numpy as np

    todo = np.fromiter(units, dtype=np.int64)
    starts = offsets[todo]
    counts = offsets[todo + 1] - starts
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return np.arange(total, dtype=np.int64) + shift
