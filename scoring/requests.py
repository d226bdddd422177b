"""Forward-pass requests, deduplication and length bucketing under a token budget.

A method turns each sentence (or pair) into :class:`Request` objects: one model input (token
ids, optional token type ids) plus the (position, target id) pairs whose log-probability it
needs. Identical inputs are merged (the three options of a StereoSet example share their
first masked context; the BOS-only input of the causal methods is shared by every sentence),
inputs are sorted by length and packed into batches whose padded size stays under the budget.

Pure Python: no torch here, so planning is testable without a model.
"""

from __future__ import annotations

import itertools
import operator
from typing import AbstractSet, Any, Hashable, Iterable, Sequence, cast

InputKey = tuple[tuple[int, ...], "tuple[int, ...] | None"]
Gather = tuple[int, int]


class _SlottedValue:
    """Equality, hashing and repr by the values of ``__slots__``, in slot order (a value class
    without a dataclass's per-instance cost; treat instances as immutable)."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    @property
    def key(self) -> InputKey:
        return (self.input_ids, self.token_type_ids)  # type: ignore[attr-defined]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Request(_SlottedValue):
    """One model input and the log-probabilities to read from its output.

    Attributes:
        input_ids: the full input, special tokens included.
        gather: ``(position, target)`` pairs. For language models: the log-probability of token
            id ``target`` at ``position``. For a next-sentence head: ``(0, class index)``.
        token_type_ids: segment ids, or None to let the model use its default (all zeros).

    A slotted value class rather than a frozen dataclass: a run builds one per masked copy
    (61,091 for ``pll`` over CrowS-Pairs), and a frozen dataclass's ``__init__`` cost 4.6 µs of
    each (issue 35, cProfile). Treat it as immutable; equality and hashing are by value.
    """

    __slots__ = ("input_ids", "gather", "token_type_ids")

    def __init__(self, input_ids: tuple[int, ...], gather: tuple[Gather, ...],
                 token_type_ids: tuple[int, ...] | None = None) -> None:
        if token_type_ids is not None and len(token_type_ids) != len(input_ids):
            raise ValueError("token_type_ids must be as long as input_ids")
        self.input_ids = input_ids
        self.gather = gather
        self.token_type_ids = token_type_ids

    def __len__(self) -> int:
        return len(self.input_ids)


class BatchRow(_SlottedValue):
    """A deduplicated input with the union of the gathers every request asked of it (slotted, as
    :class:`Request`; treat it as immutable)."""

    __slots__ = ("input_ids", "token_type_ids", "gather")

    def __init__(self, input_ids: tuple[int, ...], token_type_ids: tuple[int, ...] | None,
                 gather: tuple[Gather, ...]) -> None:
        self.input_ids = input_ids
        self.token_type_ids = token_type_ids
        self.gather = gather


class Done:
    """A batch's values already on the host: what a scorer's ``launch`` returns when its device
    runs synchronously (CPU, the fake model, next-sentence heads); see
    :meth:`~stereoset_eval.scoring.scorers.Scorer.launch`.

    >>> Done([[-1.5], [-0.5, -2.0]]).result()
    [[-1.5], [-0.5, -2.0]]
    """

    __slots__ = ("_values",)

    def __init__(self, values: list[list[float]]) -> None:
        self._values = values

    def result(self) -> list[list[float]]:
        return self._values


def merge_requests(requests: Iterable[Request | BatchRow]) -> list[BatchRow]:
    """Merge requests (or rows) with identical inputs; each row gathers the union of their pairs.

    A request whose input no other request shares serves as its own row: it has every attribute
    of a :class:`BatchRow` (``input_ids``, ``token_type_ids``, ``gather``, ``key``).

    >>> a = Request((2, 4, 3), ((1, 7),))
    >>> b = Request((2, 4, 3), ((1, 9), (1, 7)))
    >>> [r.gather for r in merge_requests([a, b])]
    [((1, 7), (1, 9))]
    """
    firsts: dict[InputKey, Request | BatchRow] = {}
    merged: dict[InputKey, dict[Gather, None]] = {}
    for req in requests:
        key = (req.input_ids, req.token_type_ids)  # req.key, without the property call
        first = firsts.setdefault(key, req)
        if first is req:  # the common case: a new input
            continue
        slot = merged.get(key)
        if slot is None:
            slot = merged[key] = dict.fromkeys(first.gather)
        slot.update(dict.fromkeys(req.gather))  # new pairs after the earlier ones, in request order
    out: list[BatchRow] = []
    for key, first in firsts.items():
        if key in merged:
            out.append(BatchRow(key[0], key[1], tuple(merged[key])))
        elif len(set(first.gather)) < len(first.gather):  # one request asking a pair twice: the pair once
            out.append(BatchRow(key[0], key[1], tuple(dict.fromkeys(first.gather))))
        else:  # an input only one request (or row) asks for is its own row (no copy: 60,525 rows for pll over CrowS-Pairs)
            out.append(cast(BatchRow, first))
    return out


def gather_index(rows: Sequence[BatchRow]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """What a batch must read off the model: the distinct ``(row, position)`` pairs whose output
    is needed (each computed once), and for every gather in row order its pair index and target.

    >>> gather_index([BatchRow((1, 2, 3), None, ((1, 7), (1, 8))), BatchRow((4, 5), None, ((0, 9),))])
    ([(0, 1), (1, 0)], [0, 0, 1], [7, 8, 9])
    """
    pairs: dict[tuple[int, int], int] = {}
    g_pair: list[int] = []
    g_target: list[int] = []
    for b, row in enumerate(rows):
        for pos, target in row.gather:
            g_pair.append(pairs.setdefault((b, pos), len(pairs)))
            g_target.append(target)
    return list(pairs), g_pair, g_target


def gather_arrays(rows: Sequence[BatchRow]) -> tuple[Any, Any, Any, Any]:
    """:func:`gather_index` as int64 arrays, built with array operations: ``(pair rows, pair
    positions, each gather's pair index, each gather's target)``, the pairs in the same order
    (first use). The causal methods read every position of every row (75,011 gathers for
    tiny-gpt2 ``stereoset-causal`` over StereoSet intrasentence): one Python step per gather in
    :func:`gather_index` was the scorer's largest host cost there (issue 35).

    >>> [a.tolist() for a in gather_arrays([BatchRow((1, 2, 3), None, ((1, 7), (1, 8))), BatchRow((4, 5), None, ((0, 9),))])]
    [[0, 1], [1, 0], [0, 0, 1], [7, 8, 9]]
    """
    import numpy as np

    counts = np.fromiter(map(len, (r.gather for r in rows)), dtype=np.int64, count=len(rows))
    flat = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(r.gather for r in rows)),
                       dtype=np.int64, count=2 * int(counts.sum())).reshape(-1, 2)
    row_of = np.repeat(np.arange(len(rows), dtype=np.int64), counts)
    positions, targets = flat[:, 0], flat[:, 1]
    return (*first_use_pairs(row_of, positions), np.ascontiguousarray(targets))


def first_use_pairs(row_of: Any, positions: Any) -> tuple[Any, Any, Any]:
    """``(pair rows, pair positions, each gather's pair)`` for gathers at ``(row_of[k], positions[k])``
    (int64 arrays): the distinct pairs in order of first use, as :func:`gather_index` numbers them."""
    import numpy as np

    keys = row_of * (int(positions.max(initial=0)) + 1) + positions
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order), dtype=np.int64)
    firsts = first[order]
    return np.ascontiguousarray(row_of[firsts]), np.ascontiguousarray(positions[firsts]), rank[inverse.reshape(-1)]


def one_pair_per_row(pairs: Sequence[tuple[int, int]], n_rows: int) -> bool:
    """True if ``pairs`` (from :func:`gather_index`) is exactly one position of each row, in row order.

    >>> one_pair_per_row([(0, 3), (1, 2)], 2), one_pair_per_row([(0, 3), (0, 4)], 2)
    (True, False)
    """
    return len(pairs) == n_rows and all(b == i for i, (b, _) in enumerate(pairs))


def padded_cost(n_rows: int, max_len: int) -> int:
    """Tokens a padded batch of ``n_rows`` rows of length ``max_len`` occupies."""
    return n_rows * max_len


BATCH_OVERHEAD_TOKENS = 64  # the fixed cost of one more forward pass, in padded-token equivalents (CPU)
# On a GPU a forward pass has a much larger fixed cost (Python and ~150 kernel launches for a
# 12-layer model, ~4 ms) against a much higher throughput: measured on an H200 (BERT-base-sized,
# float32, speed/gpu_check.sh) one pass costs about as much as 1,000 more tokens, so batches
# of different lengths are merged far more eagerly there.
CUDA_BATCH_OVERHEAD_TOKENS = 1024
OVERHEAD_REFERENCE_WIDTH = 768  # the hidden size the two figures above were measured at (BERT-base, GPT-2 small)


def batch_overhead_tokens(device_type: str, hidden_size: int | None = None) -> int:
    """The fixed cost of one forward pass on ``device_type`` (``cpu``, ``cuda``, ...), in tokens,
    for a model of ``hidden_size`` (None: the reference width).

    The fixed cost of a pass (Python, one kernel launch per operation) grows with the number
    of layers, like the cost of a token, which also grows with the square of the width: in
    tokens the fixed cost scales as ``(768 / hidden_size) ** 2`` (the layers cancel). Measured on
    2 CPU cores for the fixture models (hidden size 64, so 64 × 144 = 9,216 tokens): a pass of
    512 tokens takes 2.3 ms and one of 8,192 tokens 9.8 ms, a fixed cost of ~1,800 tokens; merging
    every commit group into one batch (overheads of 1,024 to 8,192 tokens give nearly the same plans) made
    tiny-bert ``crows-nangia`` over CrowS-Pairs 2.60 → 2.34 s (353 → 196 batches) and
    ``stereoset-mlm`` over StereoSet intrasentence 0.85 → 0.72 s (84 → 22 batches). Only the
    batch composition depends on it (numbers move by float32 batch noise at most), and it
    depends on the model's config only, never on timings, so plans are reproducible.

    >>> batch_overhead_tokens("cpu"), batch_overhead_tokens("cuda"), batch_overhead_tokens("cpu", 64)
    (64, 1024, 9216)
    >>> batch_overhead_tokens("cpu", 1024), batch_overhead_tokens("cuda", 384)
    (36, 4096)
    """
    base = CUDA_BATCH_OVERHEAD_TOKENS if device_type == "cuda" else BATCH_OVERHEAD_TOKENS
    if not hidden_size or hidden_size < 1:
        return base
    return max(1, round(base * (OVERHEAD_REFERENCE_WIDTH / hidden_size) ** 2))


def plan_batches(rows: Sequence[BatchRow], batch_tokens: int, *,
                 overhead_tokens: int = BATCH_OVERHEAD_TOKENS) -> list[list[BatchRow]]:
    """Sort rows by length and cut them into batches of at most ``batch_tokens`` padded tokens.

    The cut points minimise padded tokens plus ``overhead_tokens`` per batch (dynamic
    programming over the distinct lengths), so rows of different lengths share a batch only
    when padding them is cheaper than one more forward pass. Filling batches greedily up to the
    budget instead padded short inputs to the longest in the batch: +40-80 % computed tokens on
    short, varied inputs (StereoSet contexts, a few CrowS sentences), measured by
    ``speed/`` against exact-length batches. A row longer than the budget gets a batch of
    its own (a batch always has one row).

    >>> rows = [BatchRow(tuple(range(n)), None, ()) for n in (5, 2, 3, 2)]
    >>> [[len(r.input_ids) for r in b] for b in plan_batches(rows, 6)]
    [[2, 2], [3], [5]]
    >>> rows = [BatchRow(tuple(range(n)), None, ()) for n in (10, 10, 11, 40, 40)]
    >>> [[len(r.input_ids) for r in b] for b in plan_batches(rows, 1000)]  # 2 pads < 64; 3 x 29 pads > 64
    [[10, 10, 11], [40, 40]]
    """
    ordered = sorted(rows, key=lambda r: len(r.input_ids))  # stable: ties keep request order
    return [ordered[start:stop] for start, stop in batch_cuts([len(r.input_ids) for r in ordered], batch_tokens,
                                                              overhead_tokens=overhead_tokens)]


def batch_cuts(lengths: Sequence[int], batch_tokens: int, *,
               overhead_tokens: int = BATCH_OVERHEAD_TOKENS) -> list[tuple[int, int]]:
    """:func:`plan_batches`' cut points as ``(start, stop)`` slices of rows already sorted by length
    (``lengths``, non-decreasing): the plan of least padded tokens plus ``overhead_tokens`` per batch.

    >>> batch_cuts([2, 2, 3, 5], 6)
    [(0, 2), (2, 3), (3, 4)]
    """
    if batch_tokens < 1:
        raise ValueError(f"batch_tokens must be >= 1, got {batch_tokens}")
    # one segment boundary per distinct length: ends[j] = index after the last row of that length
    # (found in one pass of C: runs of equal lengths, where a loop over the rows cost ~150 µs a launch)
    ends = list(itertools.accumulate(map(len, map(list, map(operator.itemgetter(1), itertools.groupby(lengths))))))
    lengths = [lengths[end - 1] for end in ends]  # from here only each segment's length is read
    starts = [0] + ends
    best: list[float] = [0.0] + [float("inf")] * len(ends)  # best[j]: cheapest plan of the rows before ends[j-1]
    cut = [0] * (len(ends) + 1)
    for j in range(1, len(ends) + 1):
        length = lengths[j - 1]
        per_batch = max(1, batch_tokens // length)
        for i in range(j):
            n = ends[j - 1] - starts[i]
            cost = best[i] + n * length + -(-n // per_batch) * overhead_tokens
            if cost < best[j]:
                best[j], cut[j] = cost, i
    segments = []
    j = len(ends)
    while j:
        segments.append((starts[cut[j]], ends[j - 1], lengths[j - 1]))
        j = cut[j]
    out: list[tuple[int, int]] = []
    for start, stop, length in reversed(segments):
        per_batch = max(1, batch_tokens // length)
        out.extend((k, min(stop, k + per_batch)) for k in range(start, stop, per_batch))
    return out


def plan_groups(unit_requests: Sequence[Sequence[Request]], batch_tokens: int,
                items: Sequence[Hashable] | None = None) -> list[list[int]]:
    """Group units (indices into ``unit_requests``) into commit groups of about one batch.

    Units are visited shortest first (by their longest input); a unit joins the current group
    while the group's deduplicated inputs still fit in ``batch_tokens`` padded tokens. Every
    group is computed, and its results committed to the cache, as one piece; the grouping
    depends only on the units and the budget, so a rerun after an interruption rebuilds the
    same groups and recomputes an interrupted group with exactly the same batches.

    ``items`` (one key per unit, e.g. its item id): the units of one item are visited together
    (ordered by the item's longest input) and never split across groups unless the item alone
    exceeds the budget, because the inputs a method's units share are an item's: StereoSet's
    three options share their first masked context. Sorted unit by unit, the three options of an
    example fell into different groups and their shared input ran once per group (issue 35:
    tiny-bert ``stereoset-mlm`` over StereoSet intrasentence, 155,836 forward tokens where 129,597
    are distinct). With one unit per item the groups are those of units alone.

    Why one budget, measured in issue 19: larger groups fill batches better —
    a CrowS-Pairs pair's two sentences have two lengths, so a one-budget group runs as two
    half-full exact-length batches (tiny-bert ``crows-nangia`` over CrowS-Pairs: 353 batches, 2.54 s;
    4 budgets: 278 batches, 2.27 s; ``pll`` unchanged) — but they mix full and partial batches of
    many shapes between two commits and (measured; the mechanism not pinned down) the heap that
    reuses freed buffers fragments again:
    BERT-base-sized ``stereoset-mlm`` scoring peak +235 / +406 MB at 1,920 / 3,840 sentences with
    4 budgets, +233 / +270 MB with one. Groups of one budget also keep an interruption's lost work
    and the progress bar's steps at one batch.

    >>> u = [[Request((1, 2), ())], [Request((1, 2, 3, 4), ())], [Request((1, 2), ())]]
    >>> plan_groups(u, 4)
    [[0, 2], [1]]
    >>> plan_groups(u, 4, items=["a", "a", "b"])  # item a (0, 1) is 4 tokens long: b first, alone
    [[2], [0, 1]]
    """
    lengths = [max([len(r.input_ids) for r in reqs]) if reqs else 0 for reqs in unit_requests]
    return group_units(lengths, [[(r.input_ids, r.token_type_ids) for r in reqs] for reqs in unit_requests],
                       batch_tokens, items)


def group_units(lengths: Sequence[int], unit_keys: Sequence[Iterable[Hashable]], batch_tokens: int,
                items: Sequence[Hashable] | None = None) -> list[list[int]]:
    """:func:`plan_groups` from each unit's longest input (``lengths``) and the keys of its distinct
    inputs (``unit_keys``): the one grouping rule for requests and for masked copies
    (:mod:`stereoset_eval.scoring.copies`, whose keys are interned ints).

    >>> group_units([2, 4, 2], [["a"], ["b"], ["a"]], 4)
    [[0, 2], [1]]
    """
    blocks = _blocks(len(lengths), items)
    block_keys = [set(unit_keys[block[0]]) if len(block) == 1 else {k for i in block for k in unit_keys[i]}
                  for block in blocks]
    return _grouped(blocks, [max(lengths[i] for i in block) for block in blocks], [0] * len(blocks), block_keys,
                    batch_tokens)


def group_coded_units(lengths: Sequence[int], keys: Any, offsets: Any, batch_tokens: int,
                      items: Sequence[Hashable] | None = None) -> list[list[int]]:
    """:func:`group_units` where the keys are ints: unit ``i``'s are ``keys[offsets[i]:offsets[i + 1]]``
    (int64 arrays), as masked copies' codes are. The same groups, with fewer set operations: a key
    that occurs once in the run can be new to no group but its unit's, so each unit's such keys are
    only counted (with array operations); the loop keeps a set of the others alone (issue 35: ~8 of
    ~9 ms a CrowS-Pairs method's grouping took).

    >>> import numpy as np
    >>> group_coded_units([2, 4, 2], np.array([7, 8, 7]), np.array([0, 1, 2, 3]), 4)
    [[0, 2], [1]]
    """
    import numpy as np

    keys = np.asarray(keys, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(keys) and keys.min() >= 0 and keys.max() < 4 * len(keys):  # small ints (slots): counted directly
        once = np.bincount(keys)[keys] == 1
    else:
        _, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        once = counts[inverse.reshape(-1)] == 1  # a key no other unit (and no other copy of its own) has
    before = np.zeros(len(keys) + 1, dtype=np.int64)
    np.cumsum(once, out=before[1:])
    private = (before[offsets[1:]] - before[offsets[:-1]]).tolist()  # per unit: its keys that occur once
    at = np.flatnonzero(~once)
    others: dict[int, set[int]] = {}  # unit -> its other keys, for the units that have any
    for unit, key in zip((np.searchsorted(offsets, at, side="right") - 1).tolist(), keys[at].tolist()):
        others.setdefault(unit, set()).add(key)
    shared: list[AbstractSet[int]] = [_NO_KEYS] * (len(offsets) - 1)
    for unit, unit_keys in others.items():
        shared[unit] = unit_keys
    if items is None:  # each unit a block of its own
        return _grouped([[i] for i in range(len(lengths))], lengths, private, shared, batch_tokens)
    blocks = _blocks(len(lengths), items)
    return _grouped(blocks, [max(lengths[i] for i in block) for block in blocks],
                    [sum(private[i] for i in block) for block in blocks],
                    [set().union(*(shared[i] for i in block)) for block in blocks], batch_tokens)


_NO_KEYS: frozenset[Any] = frozenset()


def _blocks(n_units: int, items: Sequence[Hashable] | None) -> list[list[int]]:
    """The units visited together: each alone, or (``items``) every unit of one item, in unit order."""
    if items is None:
        return [[i] for i in range(n_units)]
    by_item: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        by_item.setdefault(item, []).append(i)
    return list(by_item.values())


def _grouped(blocks: Sequence[list[int]], block_lengths: Sequence[int], block_private: Sequence[int],
             block_keys: Sequence[AbstractSet[Hashable]], batch_tokens: int) -> list[list[int]]:
    """The grouping rule of :func:`group_units`: blocks visited shortest first (by their longest
    input), a block joining the current group while the group's distinct inputs still fit in
    ``batch_tokens`` padded tokens. A block's distinct inputs are its ``block_private`` ones, which
    no other block has, and ``block_keys``."""
    order = sorted(range(len(blocks)), key=block_lengths.__getitem__)
    groups: list[list[int]] = []
    current: list[int] = []
    keys: set[Hashable] = set()
    n_keys = max_len = 0
    for b in order:
        new_keys = block_keys[b]
        new_len = max(max_len, block_lengths[b])
        n_new = block_private[b] + (len(new_keys - keys) if new_keys else 0)
        if current and padded_cost(n_keys + n_new, new_len) > batch_tokens:
            groups.append(current)
            current, keys, n_keys = [], set(), 0
            new_len = block_lengths[b]
            n_new = block_private[b] + len(new_keys)
        current += blocks[b]
        if new_keys:
            keys |= new_keys
        n_keys += n_new
        max_len = new_len
    if current:
        groups.append(current)
    return groups
