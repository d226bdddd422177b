"""Masked copies as arrays: one request per sentence, copies interned as ints, batches built by numpy.

``pll``, ``pll-word-l2r`` and ``crows-nangia`` score a sentence by masking one span of it at a
time and reading the original token at the span's first position. As one
:class:`~stereoset_eval.scoring.requests.Request` per copy, every copy was a Python tuple and
object, hashed and looked up at every stage (merge, reuse, read-back, reduction): host work per
masked copy that a GPU's forward passes no longer hide (issue 35). Here a sentence's copies are
one :class:`MaskedCopies` (its ids and the spans), and each copy is an int *code*: the interned
sentence, the span's start and stop (:meth:`CopyTable.codes`). The engine merges, reuses and
reads back codes with array and C-level set/dict operations, and :class:`CopyBatch` builds a
batch's padded ids, mask spans and targets with array operations.

The inputs, the gathers and so the numbers are those of one request per copy
(:meth:`MaskedCopies.requests`, which the general path and every reader of ``Prepared.requests``
still use); ``tests/test_copies.py`` checks the two paths against each other. Two copies of
*different* sentences can be the same masked input (a CrowS-Pairs pair masked at the word it
differs by): they are two codes but one row of the batch, with two gathers, as the general path
merges them (:meth:`CopyTable.representatives`; equal inputs are found by a hash of the text
around the span, then compared exactly). Only copies of a sentence that itself holds the mask
token could be one input under two different spans; those would run twice, with equal numbers.
"""

from __future__ import annotations

import operator
from typing import Any, Iterator, Sequence, overload

from stereoset_eval.scoring.requests import BatchRow, InputKey, Request, _SlottedValue

SPAN_BITS = 20  # start and stop each take 20 bits of a code: inputs up to 2**20 - 1 tokens
MAX_SENTENCES = 1 << (63 - 2 * SPAN_BITS)  # distinct sentences of one table (2**23): codes fit in int64
_SPAN_MASK = (1 << SPAN_BITS) - 1
_new = object.__new__
_HASH_BASE = 0x9E3779B97F4A7C15  # odd multipliers of the polynomial hashes (uint64 arithmetic wraps)
_MIX = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93)


class MaskedCopies(_SlottedValue):
    """A sentence's masked copies as one request: copy ``i`` is ``input_ids`` with positions
    ``starts[i] .. stops[i] - 1`` replaced by ``mask_id``; it gathers the log-probability of the
    sentence's own token at ``starts[i]`` (``(starts[i], input_ids[starts[i]])``).

    A slotted value class (equality and hashing by value); treat as immutable.

    >>> c = MaskedCopies((2, 10, 11, 3), (1, 2), (3, 3), mask_id=4)
    >>> [(r.input_ids, r.gather) for r in c.requests()]
    [((2, 4, 4, 3), ((1, 10),)), ((2, 10, 4, 3), ((2, 11),))]
    """

    __slots__ = ("input_ids", "starts", "stops", "mask_id", "token_type_ids")

    def __init__(self, input_ids: tuple[int, ...], starts: tuple[int, ...], stops: tuple[int, ...], *,
                 mask_id: int, token_type_ids: tuple[int, ...] | None = None) -> None:
        self.input_ids = input_ids
        self.starts = starts
        self.stops = stops
        self.mask_id = mask_id
        self.token_type_ids = token_type_ids
        self.check()

    @classmethod
    def unchecked(cls, input_ids: tuple[int, ...], starts: tuple[int, ...], stops: tuple[int, ...], *,
                  mask_id: int) -> "MaskedCopies":
        """The copies (no token types) without :meth:`check`, for a method preparing a run's
        sentences: :meth:`CopyTable.codes_of` checks every span of the run at once, and
        :meth:`requests` checks its own (issue 35: the per-object checks cost ~5 ms of 3,000 sentences).

        >>> MaskedCopies.unchecked((2, 10, 3), (1,), (2,), mask_id=4) == MaskedCopies((2, 10, 3), (1,), (2,), mask_id=4)
        True
        """
        copies = _new(cls)
        copies.input_ids, copies.starts, copies.stops, copies.mask_id, copies.token_type_ids = \
            input_ids, starts, stops, mask_id, None
        return copies

    def check(self) -> None:
        """ValueError unless every span is non-empty and inside the input, and the token types (if
        any) are as long as the input."""
        starts, stops, input_ids = self.starts, self.stops, self.input_ids
        if len(starts) != len(stops):
            raise ValueError("starts and stops must be as long as each other")
        if starts and (min(starts) < 0 or max(stops) > len(input_ids) or not all(map(operator.lt, starts, stops))):
            raise ValueError("every span must be non-empty and inside the input")
        if self.token_type_ids is not None and len(self.token_type_ids) != len(input_ids):
            raise ValueError("token_type_ids must be as long as input_ids")

    def __len__(self) -> int:
        return len(self.starts)

    def requests(self) -> list[Request]:
        """The same copies as one :class:`Request` each (the general form)."""
        self.check()
        base, mask = self.input_ids, self.mask_id
        return [Request(base[:s] + (mask,) * (e - s) + base[e:], ((s, base[s]),), self.token_type_ids)
                for s, e in zip(self.starts, self.stops)]


class CopyTable:
    """The distinct sentences of a run's masked copies, interned as ints, and their ids as one
    padded matrix (``-1`` past each sentence's end) for building batches.

    One table serves every method of a run that shares values
    (:meth:`~stereoset_eval.scoring.shared_work.SharedWork.copy_table`), so a code means the same
    masked input to all of them.
    """

    def __init__(self) -> None:
        self._index: dict[InputKey, int] = {}
        self._sentences: list[InputKey] = []
        self._mask_id: int | None = None
        self._arrays: tuple[Any, Any, Any] | None = None  # ids matrix, lengths, token types matrix (or None)
        self._hashes: tuple[Any, Any] | None = None  # per sentence, hashes of every prefix and every suffix
        self._kept: list[tuple[Any, Any, Any]] = []  # runs' (codes, values, known) arrays, not merged yet
        self._known: tuple[Any, Any] | None = None  # (codes sorted, their values) merged so far

    def __len__(self) -> int:
        return len(self._sentences)

    @property
    def mask_id(self) -> int:
        assert self._mask_id is not None, "no copies interned yet"
        return self._mask_id

    def index(self, copies: MaskedCopies) -> int:
        """The int of the copies' sentence (interned on first sight): the high bits of each code."""
        if self._mask_id is None:
            self._mask_id = copies.mask_id
        elif copies.mask_id != self._mask_id:
            raise ValueError(f"one copy table serves one mask id ({self._mask_id}), got {copies.mask_id}")
        key = (copies.input_ids, copies.token_type_ids)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self._sentences)
            if index >= MAX_SENTENCES:
                raise ValueError(f"more than {MAX_SENTENCES} distinct sentences in one run")
            if len(copies.input_ids) > _SPAN_MASK:
                raise ValueError(f"an input of {len(copies.input_ids)} tokens is longer than masked copies allow")
            self._sentences.append(key)
            self._arrays = self._hashes = None
        return index

    def codes(self, copies: MaskedCopies) -> list[int]:
        """One int per copy: the sentence's index, the span's start and stop (interning the sentence)."""
        high = self.index(copies) << (2 * SPAN_BITS)
        return [high | (s << SPAN_BITS) | e for s, e in zip(copies.starts, copies.stops)]

    def codes_of(self, copies: Sequence[MaskedCopies]) -> Any:
        """:meth:`codes` of each of ``copies`` in order, as one int64 array made with array
        operations (the sentences interned in the same order)."""
        import itertools

        import numpy as np

        indexes = np.fromiter(map(self.index, copies), dtype=np.int64, count=len(copies))
        spans = np.fromiter(map(len, copies), dtype=np.int64, count=len(copies))
        every_stops = list(map(operator.attrgetter("stops"), copies))
        if not np.array_equal(np.fromiter(map(len, every_stops), dtype=np.int64, count=len(copies)), spans):
            raise ValueError("starts and stops must be as long as each other")
        total = int(spans.sum())
        starts = np.fromiter(itertools.chain.from_iterable(map(operator.attrgetter("starts"), copies)), dtype=np.int64, count=total)
        stops = np.fromiter(itertools.chain.from_iterable(every_stops), dtype=np.int64, count=total)
        if total:  # every span checked at once (the copies may be MaskedCopies.unchecked)
            lengths = np.repeat(self.arrays()[1][indexes], spans)
            if not ((starts >= 0) & (stops > starts) & (stops <= lengths)).all():
                raise ValueError("every span must be non-empty and inside the input")
        return (np.repeat(indexes, spans) << (2 * SPAN_BITS)) | (starts << SPAN_BITS) | stops

    def keep_values(self, codes: Any, values: Any, known: Any) -> None:
        """Keep a run's values for the runs after it: ``codes`` (sorted, distinct), ``values`` and
        ``known`` (which values are there) are the run's own arrays, which it goes on filling."""
        self._kept.append((codes, values, known))

    def known_values(self) -> tuple[Any, Any]:
        """``(codes, values)``: every code whose value a run kept here (sorted; an int64 and a
        float64 array). Call it between runs: the runs kept so far are merged once, the latest
        value of a code winning."""
        import numpy as np

        if self._kept or self._known is None:
            codes = [c[k] for c, _, k in self._kept]
            values = [v[k] for _, v, k in self._kept]
            if self._known is not None:
                codes.insert(0, self._known[0])
                values.insert(0, self._known[1])
            every = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
            every_value = np.concatenate(values) if values else np.zeros(0, dtype=np.float64)
            distinct, last = np.unique(every[::-1], return_index=True)  # first in reverse: the latest
            self._known = distinct, every_value[::-1][last]
            self._kept = []
        return self._known

    def arrays(self) -> tuple[Any, Any, Any]:
        """(ids matrix ``[sentences, longest]`` padded with -1, lengths, token types matrix or None)."""
        if self._arrays is None:
            import numpy as np

            lengths = np.fromiter((len(ids) for ids, _ in self._sentences), dtype=np.int64, count=len(self._sentences))
            width = int(lengths.max()) if len(lengths) else 0
            ids = np.full((len(self._sentences), width), -1, dtype=np.int64)
            types = None
            if any(t is not None for _, t in self._sentences):
                types = np.zeros((len(self._sentences), width), dtype=np.int64)
            for i, (row, row_types) in enumerate(self._sentences):
                ids[i, :len(row)] = row
                if types is not None and row_types is not None:
                    types[i, :len(row_types)] = row_types
            self._arrays = ids, lengths, types
        return self._arrays

    def _prefix_suffix_hashes(self) -> tuple[Any, Any]:
        """``(prefix, suffix)``: ``prefix[i, j]`` hashes sentence ``i``'s ids before position ``j``,
        ``suffix[i, j]`` those from ``j`` on (token types included), each ``[sentences, longest + 1]``."""
        if self._hashes is None:
            import numpy as np

            ids, _, types = self.arrays()
            values = (ids + 1).astype(np.uint64)  # padding (-1) hashes as 0
            if types is not None:
                values = values * np.uint64(_MIX[2]) + types.astype(np.uint64)
            powers = np.cumprod(np.full(ids.shape[1], _HASH_BASE, dtype=np.uint64))
            terms = values * powers[None, :]
            prefix = np.zeros((ids.shape[0], ids.shape[1] + 1), dtype=np.uint64)
            np.cumsum(terms, axis=1, out=prefix[:, 1:])
            self._hashes = prefix, prefix[:, -1:] - prefix
        return self._hashes

    def representatives(self, codes: Any) -> Any:
        """For each of ``codes`` (distinct), the smallest of them whose masked input is the same
        input (itself where no other is): copies of two sentences that differ only inside the span."""
        import numpy as np

        if len(codes) < 2:
            return codes
        prefix, suffix = self._prefix_suffix_hashes()
        index = codes >> (2 * SPAN_BITS)
        starts, stops = (codes >> SPAN_BITS) & _SPAN_MASK, codes & _SPAN_MASK
        shape = (self.lengths(codes) << (2 * SPAN_BITS)) | (starts << SPAN_BITS) | stops
        mixed = (prefix[index, starts] * np.uint64(_MIX[0]) + suffix[index, stops] * np.uint64(_MIX[1])
                 + shape.astype(np.uint64))
        order = np.argsort(mixed)  # not stable: a run of equal hashes is visited in code order below
        ranked = mixed[order]
        same = ranked[1:] == ranked[:-1]
        if not same.any():  # the common case: every copy is its own input
            return codes
        # codes whose hash another code shares: their inputs compared exactly, all at once, each with
        # the first of its run of equal hashes (equal inputs hash alike, so no two codes of different
        # hashes can be one input; where a run holds unequal inputs, the rows are sorted instead)
        shared_hash = np.zeros(len(ranked), dtype=bool)
        shared_hash[1:] |= same
        shared_hash[:-1] |= same
        candidates = order[shared_hash]
        hashes = ranked[shared_hash]
        first_of_run = np.ones(len(hashes), dtype=bool)
        first_of_run[1:] = hashes[1:] != hashes[:-1]
        input_of = np.cumsum(first_of_run) - 1  # the run of equal hashes each candidate is in
        inputs = self._masked_inputs(codes[candidates])
        if not (inputs == inputs[np.flatnonzero(first_of_run)[input_of]]).all():  # a collision: sort them out
            _, input_of = np.unique(inputs, axis=0, return_inverse=True)
            input_of = input_of.reshape(-1)
        smallest = np.full(int(input_of.max()) + 1, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(smallest, input_of, codes[candidates])
        out = codes.copy()
        out[candidates] = smallest[input_of]
        return out

    def masked_ids(self, codes: Any) -> tuple[Any, Any]:
        """``(ids [codes, width], each one's length)``: each of ``codes``' masked input, its span
        replaced by the mask id and -1 past its end (``width``: the longest of them)."""
        import numpy as np

        matrix, lengths, _ = self.arrays()
        index = codes >> (2 * SPAN_BITS)
        starts, stops = (codes >> SPAN_BITS) & _SPAN_MASK, codes & _SPAN_MASK
        row_lengths = lengths[index]
        width = int(row_lengths.max())
        ids = matrix[index, :width]  # fancy indexing: a copy
        if bool((stops - starts == 1).all()):
            ids[np.arange(len(index)), starts] = self.mask_id
        else:
            cols = np.arange(width)[None, :]
            ids[(cols >= starts[:, None]) & (cols < stops[:, None])] = self.mask_id
        return ids, row_lengths

    def _masked_inputs(self, codes: Any) -> Any:
        """Each of ``codes``' masked input as one row, to compare inputs exactly: its ids with the span
        masked, then -1 past its end, then (where the table has them) its token types."""
        import numpy as np

        ids, _ = self.masked_ids(codes)
        types = self.arrays()[2]
        if types is None:
            return ids
        index = codes >> (2 * SPAN_BITS)
        typed = np.fromiter((t is not None for _, t in self._sentences), dtype=np.int64, count=len(self._sentences))
        return np.concatenate([ids, types[index, :ids.shape[1]], typed[index][:, None]], axis=1)  # None is not all zeros

    def lengths(self, codes: Any) -> Any:
        """The input length of each code (an int64 array)."""
        return self.arrays()[1][codes >> (2 * SPAN_BITS)]

    def request(self, code: int) -> BatchRow:
        """One copy as a :class:`BatchRow` (for launchers that take rows)."""
        index, start, stop = code >> (2 * SPAN_BITS), (code >> SPAN_BITS) & _SPAN_MASK, code & _SPAN_MASK
        ids, types = self._sentences[index]
        return BatchRow(ids[:start] + (self.mask_id,) * (stop - start) + ids[stop:], types, ((start, ids[start]),))


class CopyBatch(Sequence[BatchRow]):
    """A batch of masked copies (codes of one :class:`CopyTable`), with the arrays a scorer needs.

    Attributes:
        inputs: the codes of the batch's rows, one per distinct masked input (int64 array).
        gathers: every code whose value the batch reads, grouped by row in row order (None: the
            rows' own codes, one each: no two copies of the batch are one input).
        gather_rows: the row of each of ``gathers`` (None with it).

    As a sequence it is the batch's rows, one :class:`BatchRow` each made on demand, so a
    launcher that takes rows (the fake model, a test's) runs it unchanged; the real scorer uses
    :meth:`arrays` instead.
    """

    __slots__ = ("table", "inputs", "gathers", "gather_rows")

    def __init__(self, table: CopyTable, inputs: Any, gathers: Any = None, gather_rows: Any = None) -> None:
        self.table = table
        self.inputs = inputs
        self.gathers = gathers
        self.gather_rows = gather_rows

    @property
    def read_codes(self) -> Any:
        """The codes of the values the batch reads, in the order its launch returns them."""
        return self.inputs if self.gathers is None else self.gathers

    def __len__(self) -> int:
        return len(self.inputs)

    @overload
    def __getitem__(self, index: int) -> BatchRow: ...

    @overload
    def __getitem__(self, index: slice) -> "CopyBatch": ...

    def __getitem__(self, index: int | slice) -> "BatchRow | CopyBatch":
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self.inputs))
            if step != 1:
                raise ValueError("a copy batch is sliced in order (step 1)")
            if self.gathers is None:
                return CopyBatch(self.table, self.inputs[start:stop])
            lo, hi = (int(k) for k in self.gather_rows.searchsorted([start, stop]))
            return CopyBatch(self.table, self.inputs[start:stop], self.gathers[lo:hi], self.gather_rows[lo:hi] - start)
        row = self.table.request(int(self.inputs[index]))
        if self.gathers is None:
            return row
        i = index % len(self.inputs)
        lo, hi = (int(k) for k in self.gather_rows.searchsorted([i, i + 1]))
        targets = tuple(self.table.request(code).gather[0] for code in self.gathers[lo:hi].tolist())
        return BatchRow(row.input_ids, row.token_type_ids, targets)

    def __iter__(self) -> Iterator[BatchRow]:
        return (self[i] for i in range(len(self.inputs)))

    def arrays(self, pad_id: int) -> tuple[Any, Any, Any, Any, Any, Any]:
        """``(input ids [rows, width], attention mask or None, token types or None, each row's
        position, each gather's row, each gather's target)``: the padded masked inputs (no mask
        where no row is padded) and what is read from them (``gather_rows`` None: row ``i``'s one)."""
        import numpy as np

        matrix, _, types = self.table.arrays()
        index = self.inputs >> (2 * SPAN_BITS)
        starts = (self.inputs >> SPAN_BITS) & _SPAN_MASK
        if self.gathers is None:  # each row's own token at its span's start
            targets = matrix[index, starts]
        else:
            targets = matrix[self.gathers >> (2 * SPAN_BITS), (self.gathers >> SPAN_BITS) & _SPAN_MASK]
        ids, row_lengths = self.table.masked_ids(self.inputs)
        width = ids.shape[1]
        attention = None
        if bool((row_lengths != width).any()):
            attention = (np.arange(width)[None, :] < row_lengths[:, None]).astype(np.int64)
            ids[ids < 0] = pad_id
        token_types = types[index, :width] if types is not None else None
        return ids, attention, token_types, starts, self.gather_rows, targets
