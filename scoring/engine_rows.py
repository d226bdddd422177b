"""The three forms of a commit group's rows the engine works with: requests, masked copies and a request table.

:func:`~stereoset_eval.scoring.engine.execute` plans, merges, reuses, batches, reads back and
reduces a method's forward rows through one of these, with the same steps and the same
grouping rule:

* :class:`RequestRows` — the general form: every unit's
  :class:`~stereoset_eval.scoring.requests.Request` objects merged into
  :class:`~stereoset_eval.scoring.requests.BatchRow` objects (any method);
* :class:`CopyRows` — the masked-LM methods' copies as int codes
  (:mod:`stereoset_eval.scoring.copies`): merged with ``numpy.unique``, their values kept, reused
  and read back as arrays over the run's distinct codes, batched as
  :class:`~stereoset_eval.scoring.copies.CopyBatch`;
* :class:`TableRows` — every unit's requests as one :class:`~stereoset_eval.scoring.table.RequestTable`
  (the StereoSet methods and ``causal-ll``, ``Method.prepare_table``), run as int codes, batched
  as :class:`~stereoset_eval.scoring.table.TableBatch`.

A group's ``values`` map a row's key to what its gathers read: for requests, the input key to
``[gathers, log-probabilities]``. Copies and table rows keep their values in arrays of their own
(a group's ``values`` only mark the rows read), and a commit group is reduced in one
``Method.reduce_rows`` call where the method has it.
"""

from __future__ import annotations

import functools
import itertools
import operator
from typing import Any, Hashable, Mapping, Protocol, Sequence, Sized

from stereoset_eval.scoring.copies import CopyBatch, CopyTable
from stereoset_eval.scoring.methods.base import Prepared, TableRowsPrepared
from stereoset_eval.scoring.table import RequestTable
from stereoset_eval.scoring.requests import (
    BatchRow, batch_cuts, group_coded_units, merge_requests, plan_batches, plan_groups,
)


class Counter(Protocol):
    rows_reused: int


class RequestRows:
    """Rows as merged :class:`BatchRow` objects, for every method."""

    keeps_values = False  # a group's values are what reuse and outputs read

    def __init__(self, prepared: Sequence[Prepared]) -> None:
        self.prepared = prepared

    def groups(self, batch_tokens: int, items: Sequence[Hashable] | None, overhead_tokens: int) -> list[list[int]]:
        return plan_groups([p.requests for p in self.prepared], batch_tokens, items=items)

    def merge(self, todo: Sequence[int]) -> list[BatchRow]:
        prepared = self.prepared
        return merge_requests(r for i in todo for r in prepared[i].requests)

    def join(self, parts: Sequence[list[BatchRow]]) -> list[BatchRow]:
        """Several groups' rows as one set (an input two of them need runs once)."""
        return merge_requests(itertools.chain.from_iterable(parts))

    def keys(self, rows: Sequence[BatchRow]) -> list[Any]:
        return [(row.input_ids, row.token_type_ids) for row in rows]

    def longest(self, rows: Sequence[BatchRow]) -> int:
        return max((len(r.input_ids) for r in rows), default=0)

    def reuse(self, rows: list[BatchRow], shared: Mapping[Any, float], values: dict[Any, Any],
              stats: Counter) -> list[BatchRow]:
        """The rows still to run; rows whose every gather is in ``shared`` go straight into ``values``."""
        todo = []
        for row in rows:
            key = (row.input_ids, row.token_type_ids)
            got = []
            for g in row.gather:
                value = shared.get((key, g[0], g[1]))
                if value is None:
                    break
                got.append(value)
            else:
                values[key] = [row.gather, got]
                stats.rows_reused += 1
                continue
            todo.append(row)
        return todo

    def batches(self, rows: Sequence[BatchRow], batch_tokens: int, overhead_tokens: int) -> list[list[BatchRow]]:
        return plan_batches(rows, batch_tokens, overhead_tokens=overhead_tokens)

    def read(self, batch: Sequence[BatchRow], launched: Any, values: dict[Any, Any],
             shared: dict[Any, float] | None) -> None:
        """A launched batch's values into ``values`` (and ``shared``): one entry per row, its own
        gathers and list (no per-row dict: 61,091 of them for ``pll`` over CrowS-Pairs, issue 35)."""
        for row, out in zip(batch, launched.result()):
            key = (row.input_ids, row.token_type_ids)
            values[key] = [row.gather, out]
            if shared is not None:
                for (pos, target), value in zip(row.gather, out):
                    shared[(key, pos, target)] = value

    def outputs(self, i: int, values: Mapping[Any, Any]) -> list[list[float]]:
        return [_outputs(values[(r.input_ids, r.token_type_ids)], r.gather) for r in self.prepared[i].requests]


def _outputs(row_values: list[Any] | tuple[Any, ...], gather: tuple[tuple[int, int], ...]) -> list[float]:
    """A request's log-probabilities from its row's ``[gathers, values]``: the row's values as they
    are when the request asked for exactly the row's gathers (the common case), else looked up in
    the row's ``gather -> value`` map, made once per row and kept as its third entry (the causal
    methods' shared first-token row serves thousands of requests one gather each)."""
    row_gather, vals = row_values[0], row_values[1]
    if row_gather == gather:
        return vals
    if len(row_values) > 2:
        lookup = row_values[2]
    else:
        lookup = dict(zip(row_gather, vals))
        if isinstance(row_values, list):
            row_values.append(lookup)
    return [lookup[g] for g in gather]


class CopyRows:
    """Rows as int codes of masked copies (every unit's ``Prepared.copies``), in ``table``.

    The values read are kept as arrays over the run's distinct codes (sorted), not per code in a
    dict: a batch's values go in with one array assignment, a group's units read theirs with one
    gather (:meth:`flats`). With ``share`` the run reads what earlier runs on ``table`` computed
    (:meth:`CopyTable.known_values`), by code with array lookups, and leaves its own values there
    for the next: a CrowS-Pairs study's ``pll-word-l2r`` and ``crows-nangia`` look up 64,000 and
    57,000 codes computed before them (issue 35: ~45 ms of dict lookups and inserts a study).
    """

    keeps_values = True  # a group's values are never read: reuse, flats and outputs read the arrays

    def __init__(self, prepared: Sequence[Prepared], table: CopyTable, *, share: bool = False) -> None:
        """Every copy interned and coded with array operations (issue 35: 45,000 copies a CrowS-Pairs
        method), then cut into one list of codes per unit."""
        import numpy as np

        self.table = table
        self.prepared = prepared
        unit_copies = [p.copies or () for p in prepared]
        copies = list(itertools.chain.from_iterable(unit_copies))
        codes = table.codes_of(copies)  # every copy's code, in unit order
        per_unit = _lengths(unit_copies)
        owner = np.repeat(np.arange(len(unit_copies), dtype=np.int64), per_unit)  # each copies' unit
        copy_starts = np.zeros(len(copies) + 1, dtype=np.int64)  # where each copies' codes start
        np.cumsum(_lengths(copies), out=copy_starts[1:])
        self._unit_offsets = copy_starts[np.concatenate(([0], np.cumsum(per_unit)))]  # where each unit's codes start
        self._cuts = self._unit_offsets.tolist()
        self._codes_in_order = codes
        longest = np.zeros(len(unit_copies), dtype=np.int64)
        np.maximum.at(longest, owner, _lengths(list(map(operator.attrgetter("input_ids"), copies))))
        self.unit_lengths: list[int] = longest.tolist()
        # per distinct code, the code of the same masked input (CopyTable.representatives: itself where
        # no other copy is its input; copies of two sentences can be one input). Commit groups count
        # such copies once (their grouping keys), as the general path does, and batches run them as one row.
        distinct = self._codes = np.unique(codes)
        self._slots = self._slots_of(codes)  # each copy's place among the distinct codes
        self._representatives = table.representatives(distinct)
        self._aliased = bool((self._representatives != distinct).any())  # some copies share an input
        # each copy's key for grouping: its slot, or its input's representative's (one input counted once)
        self._key_slots = self._slots_of(self._representatives[self._slots]) if self._aliased else self._slots
        self._merged: dict[int, tuple[list[int], Any]] = {}  # groups' merges, made with the groups
        # the value of each distinct code, and whether it is known (read back, or computed before)
        self._values = np.zeros(len(distinct), dtype=np.float64)  # float32 values, exact
        self._known = np.zeros(len(distinct), dtype=bool)
        if share:
            before, values = table.known_values()
            if len(before):
                at = np.minimum(np.searchsorted(before, distinct), len(before) - 1)
                found = before[at] == distinct
                self._values[found] = values[at[found]]
                self._known[found] = True
            table.keep_values(distinct, self._values, self._known)  # filled as this run reads its batches

    @property
    def unit_codes(self) -> list[list[int]]:
        """Each unit's copies' codes, in order (a unit's copies, then the next unit's)."""
        codes, cuts = self._codes_in_order.tolist(), self._cuts
        return [codes[a:b] for a, b in zip(cuts, cuts[1:])]

    def _slots_of(self, codes: Any) -> Any:
        """The places of ``codes`` (codes of this run) among the run's distinct codes."""
        import numpy as np

        return np.searchsorted(self._codes, codes)

    @staticmethod
    def applies(prepared: Sequence[Prepared]) -> bool:
        """True if every unit was prepared as masked copies."""
        return bool(prepared) and all(p.copies is not None for p in prepared)

    def groups(self, batch_tokens: int, items: Sequence[Hashable] | None, overhead_tokens: int) -> list[list[int]]:
        """The commit groups, with every group's :meth:`merge` made at once (one sort for the run
        instead of one per group: ~6 of ~10 ms a CrowS-Pairs method)."""
        plans = group_coded_units(self.unit_lengths, self._key_slots, self._unit_offsets, batch_tokens, items)
        self._merged = self._merge_all(plans)
        return plans

    def _merge_all(self, plans: Sequence[list[int]]) -> dict[int, tuple[list[int], Any]]:
        """Each group's first unit -> (its units, :meth:`merge` of them)."""
        import numpy as np

        n_units, n_codes = len(self.unit_lengths), len(self._codes)
        if not plans or not n_codes:
            return {}
        group_of = np.empty(n_units, dtype=np.int64)
        for k, plan in enumerate(plans):
            group_of[plan] = k
        copies_of_group = np.repeat(group_of, np.diff(self._unit_offsets))
        pairs = np.unique(copies_of_group * n_codes + self._slots)  # (group, slot): sorted by group, then code
        cuts = np.searchsorted(pairs // n_codes, np.arange(len(plans) + 1)).tolist()
        codes = self._codes[pairs % n_codes]
        return {plan[0]: (plan, codes[a:b]) for plan, a, b in zip(plans, cuts, cuts[1:]) if plan}

    def merge(self, todo: Sequence[int]) -> Any:
        """The distinct codes of the units ``todo``' copies (sorted), gathered with array operations
        (made by :meth:`groups` where ``todo`` is a whole group)."""
        import numpy as np

        from stereoset_eval.scoring.table import offsets_entries

        made = self._merged.get(todo[0]) if todo else None
        if made is not None and made[0] == todo:
            return made[1]
        return np.unique(self._codes[self._slots[offsets_entries(self._unit_offsets, todo)]])

    def join(self, parts: Sequence[Any]) -> Any:
        import numpy as np

        return np.unique(np.concatenate(parts))

    def keys(self, rows: Any) -> list[int]:
        return rows.tolist()

    def longest(self, rows: Any) -> int:
        return int(self.table.lengths(rows).max()) if len(rows) else 0

    def reuse(self, rows: Any, shared: Mapping[Any, float], values: dict[Any, Any], stats: Counter) -> Any:
        """The rows still to run: those whose value is not known yet (computed by an earlier run on
        the table, or read back by an earlier group of this one). The values stay in the run's arrays."""
        known = self._known[self._slots_of(rows)]
        n_known = int(known.sum())
        if not n_known:
            return rows
        stats.rows_reused += n_known
        return rows[~known]

    def batches(self, rows: Any, batch_tokens: int, overhead_tokens: int) -> list[CopyBatch]:
        """The rows cut as :func:`~stereoset_eval.scoring.requests.plan_batches` cuts requests: one
        row per distinct masked input (copies that are one input share it, each with its gather)."""
        import numpy as np

        table = self.table
        representatives = self._representatives[self._slots_of(rows)] if self._aliased else rows
        if representatives is rows or bool((representatives == rows).all()):  # every copy its own input
            lengths = table.lengths(rows)
            order = np.argsort(lengths, kind="stable")
            ordered = rows[order]
            return [CopyBatch(table, ordered[start:stop])
                    for start, stop in batch_cuts(lengths[order].tolist(), batch_tokens, overhead_tokens=overhead_tokens)]
        inputs, row_of = np.unique(representatives, return_inverse=True)
        lengths = table.lengths(inputs)
        order = np.argsort(lengths, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        gather_rank = rank[row_of.reshape(-1)]
        by_row = np.argsort(gather_rank, kind="stable")
        gathers, gather_rank = rows[by_row], gather_rank[by_row]
        out = []
        for start, stop in batch_cuts(lengths[order].tolist(), batch_tokens, overhead_tokens=overhead_tokens):
            lo, hi = (int(k) for k in gather_rank.searchsorted([start, stop]))
            out.append(CopyBatch(table, inputs[order[start:stop]], gathers[lo:hi], gather_rank[lo:hi] - start))
        return out

    def read(self, batch: Any, launched: Any, values: dict[Any, Any], shared: dict[Any, float] | None) -> None:
        """A launched :class:`CopyBatch`'s values into the run's arrays, by code (``values`` is left
        as it is: :attr:`keeps_values`; with sharing on, the table holds the arrays for later runs)."""
        slots = self._slots_of(batch.read_codes)
        self._values[slots] = _values_array(launched)
        self._known[slots] = True

    def _unit_values(self, todo: Sequence[int]) -> list[float]:
        """The values of the units ``todo``'s copies, unit by unit in copy order, as one list."""
        from stereoset_eval.scoring.table import offsets_entries

        slots = self._slots[offsets_entries(self._unit_offsets, todo)]
        if not self._known[slots].all():  # every value a reduction reads was read back: never a silent 0.0
            raise AssertionError("a masked copy's value was reduced before it was read back")
        return self._values[slots].tolist()

    def outputs(self, i: int, values: Mapping[Any, Any]) -> list[list[float]]:
        return [[v] for v in self._unit_values([i])]

    @functools.cached_property
    def columns(self) -> dict[str, list[Any]]:
        """The units' states as columns (``Method.reduce_rows``), made once a run."""
        return _state_columns(self.prepared)

    def flats(self, todo: Sequence[int]) -> list[list[float]]:
        """Each of the units ``todo``'s copies' values in copy order (``outputs`` flattened), one list
        a unit: the values of all of them gathered and made Python floats in one call (issue 35)."""
        return _cut_by_unit(self._unit_values(todo), todo, self._cuts)


class TableGroup:
    """Rows to run on the table path: distinct inputs (``codes``) and the table's gathers read from
    them (``entries``); its length is its number of rows. ``planned``: the run's planned batches
    these rows are, whole and in order (:meth:`TableRows.groups`), else None (rows that reuse left,
    or several groups' rows joined), which are cut as the request path cuts rows."""

    __slots__ = ("codes", "entries", "planned")

    def __init__(self, codes: Any, entries: Any, planned: Any = None) -> None:
        self.codes = codes
        self.entries = entries
        self.planned = planned

    def __len__(self) -> int:
        return len(self.codes)


class TableRows:
    """Rows as int codes of one :class:`~stereoset_eval.scoring.table.RequestTable` (every unit
    prepared as one of its rows), run in batches planned once for the whole run (issue 35).

    The run's distinct inputs are sorted by length (ties in order of first use) and cut into
    batches by :func:`~stereoset_eval.scoring.requests.batch_cuts`, as the request path cuts one
    commit group's rows, but over all of them: an input several units read runs once (the causal
    methods' start token, StereoSet's first masked context of an example), and batches hold inputs
    of one or a few lengths. Commit groups on the request path are ~one budget of whole units, so
    their batches pad across each unit's lengths (tiny-bert ``stereoset-mlm`` over StereoSet dev:
    149,634 padded tokens against 133,166 planned over the run, 129,597 distinct).

    This is the plan where a pass costs a budget of tokens or more (``overhead_tokens >=
    batch_tokens``: narrow models, whose every commit group ran as one batch anyway), so each batch
    still holds about one budget. Where a pass costs less (BERT-base-sized on a CPU), a plan over the
    run fills exact-length batches to the budget as the data grows: BERT-base-sized ``stereoset-mlm``'s
    scoring peak grew by 193 MB from 1,920 to 3,840 sentences (+142 MB with batches cut within
    one-budget chunks of the run's rows), against +36 and +60 MB with commit groups of one budget of
    units the same day; there the request path's groups are kept, each cut into its own batches.

    A unit belongs to the commit group of the planned batch that holds its last input. A group runs
    every planned batch its units read that has not run yet, each whole, whatever is cached; so a
    batch's rows, and so every number, are the same in every run of the same units and budget, also
    a run that resumes from the cache. The values are kept per gather of the table (one list for
    the run); a group's ``values`` only mark the rows read. Values shared across methods are keyed
    as the request path keys them, ``((input ids, token type ids), position, target)``, so either
    path reuses the other's; rows that reuse leaves are cut as the request path cuts a group's rows.
    """

    keeps_values = False  # a group's values mark the rows read

    def __init__(self, prepared: Sequence[Prepared]) -> None:
        import numpy as np

        table = prepared[0].table
        assert table is not None
        self.table: RequestTable = table
        # the units' states as columns (Method.reduce_rows): the table's own, else made from each state
        self.columns: Mapping[str, Sequence[Any]] = prepared.columns if isinstance(prepared, TableRowsPrepared) else \
            _state_columns(prepared)
        self._values = np.zeros(len(self.table.g_input), dtype=np.float64)  # per gather of the table (float32 values, exact)
        self._offsets: list[int] = self.table.unit_offsets.tolist()
        self._plan: Any = None  # (batch of each code, each batch's (codes, entries, entry rows)); None: per-group plan
        self._ran: Any = None  # per planned batch: launched already

    @staticmethod
    def applies(prepared: Sequence[Prepared]) -> bool:
        """True if every unit is row ``i`` of one table, in order."""
        if isinstance(prepared, TableRowsPrepared):
            return len(prepared) > 0
        if not prepared or prepared[0].table is None:
            return False
        table = prepared[0].table
        return table.n_units == len(prepared) and all(p.table is table and p.index == i for i, p in enumerate(prepared))

    def groups(self, batch_tokens: int, items: Sequence[Hashable] | None, overhead_tokens: int) -> list[list[int]]:
        """Plan the run's batches; the units grouped by the batch of their last input, in batch order
        (``items`` is not needed: an input several units share runs once in any case). Where one more
        pass costs less than a budget of tokens (``overhead_tokens < batch_tokens``), the request
        path's groups instead (:func:`~stereoset_eval.scoring.requests.group_coded_units`, ``items``
        together), each cut into its own batches."""
        import numpy as np

        table = self.table
        g_input = table.g_input
        if overhead_tokens < batch_tokens:
            self._plan = None
            return group_coded_units(table.unit_longest().tolist(), g_input, table.unit_offsets, batch_tokens, items)
        used = _first_use(g_input)
        ordered = used[np.argsort(table.lengths[used], kind="stable")]
        cuts = batch_cuts(table.lengths[ordered].tolist(), batch_tokens, overhead_tokens=overhead_tokens)
        batch_of = np.full(len(table.inputs), -1, dtype=np.int64)
        rank = np.full(len(table.inputs), -1, dtype=np.int64)
        rank[ordered] = np.arange(len(ordered), dtype=np.int64)
        for b, (start, stop) in enumerate(cuts):
            batch_of[ordered[start:stop]] = b
        entry_rank = rank[g_input]
        by_row = np.argsort(entry_rank, kind="stable")  # a row's gathers in table order: unit, then request order
        row_bounds = entry_rank[by_row].searchsorted([start for start, _ in cuts] + [len(ordered)])
        batches = [(ordered[start:stop], by_row[row_bounds[b]:row_bounds[b + 1]],
                    entry_rank[by_row[row_bounds[b]:row_bounds[b + 1]]] - start)
                   for b, (start, stop) in enumerate(cuts)]
        self._plan = (batch_of, batches)
        self._ran = np.zeros(len(cuts), dtype=bool)
        offsets = table.unit_offsets
        last = np.zeros(table.n_units, dtype=np.int64)  # a unit without gathers: the first group
        gathers = batch_of[g_input]
        nonempty = offsets[1:] > offsets[:-1]
        if gathers.size:
            last[nonempty] = np.maximum.reduceat(gathers, offsets[:-1][nonempty])
        order = np.argsort(last, kind="stable")
        bounds = np.flatnonzero(np.diff(last[order])) + 1
        return [part.tolist() for part in np.split(order, bounds)] if len(order) else []

    def merge(self, todo: Sequence[int]) -> Any:
        """Every planned batch the units ``todo`` read that has not run yet, whole."""
        import numpy as np

        from stereoset_eval.scoring.table import unit_entries

        if self._plan is None:  # the request path's groups: the group's distinct inputs in order of first use
            entries = unit_entries(self.table, todo)
            return TableGroup(_first_use(self.table.g_input[entries]), entries)
        batch_of, batches = self._plan
        needed = np.unique(batch_of[self.table.g_input[unit_entries(self.table, todo)]])
        needed = needed[~self._ran[needed]]
        self._ran[needed] = True
        parts = [batches[b] for b in needed.tolist()]
        if not parts:
            return TableGroup(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), [])
        return TableGroup(np.concatenate([codes for codes, _, _ in parts]),
                          np.concatenate([entries for _, entries, _ in parts]), parts)

    def join(self, parts: Sequence[Any]) -> Any:
        """Several groups' rows as one set (an input two of them need runs once)."""
        import numpy as np

        return TableGroup(_first_use(np.concatenate([p.codes for p in parts])), np.concatenate([p.entries for p in parts]))

    def keys(self, rows: Any) -> list[int]:
        return rows.codes.tolist()

    def longest(self, rows: Any) -> int:
        return int(self.table.lengths[rows.codes].max()) if len(rows) else 0

    def _shared_keys(self, entries: Any) -> list[tuple[Any, int, int]]:
        table = self.table
        inputs = table.inputs
        return [(inputs[c], p, t) for c, p, t in zip(table.g_input[entries].tolist(), table.g_pos[entries].tolist(),
                                                      table.g_target[entries].tolist())]

    def reuse(self, rows: Any, shared: Mapping[Any, float], values: dict[Any, Any], stats: Counter) -> Any:
        """The rows still to run; a row whose every gather is in ``shared`` takes its values from there."""
        import numpy as np

        if not shared or not len(rows):
            return rows
        got = list(map(shared.get, self._shared_keys(rows.entries)))
        found = np.fromiter((v is not None for v in got), dtype=bool, count=len(got))
        if not found.any():
            return rows
        entry_codes = self.table.g_input[rows.entries]
        left = np.unique(entry_codes[~found])  # a row with any gather missing runs
        reused_entry = ~np.isin(entry_codes, left)
        self._values[rows.entries[reused_entry]] = [v for v, r in zip(got, reused_entry.tolist()) if r]  # found: not None
        keep = np.isin(rows.codes, left)
        for code in rows.codes[~keep].tolist():
            values[code] = None  # read (from the shared values)
        stats.rows_reused += int((~keep).sum())
        return TableGroup(rows.codes[keep], rows.entries[~reused_entry])

    def batches(self, rows: Any, batch_tokens: int, overhead_tokens: int) -> list[Any]:
        """The planned batches the rows are (:meth:`groups`); other rows cut as
        :func:`~stereoset_eval.scoring.requests.plan_batches` cuts requests (sorted by length, ties
        in order of first use); each batch with its rows' gathers in row order."""
        import numpy as np

        from stereoset_eval.scoring.table import TableBatch

        if rows.planned is not None:
            return [TableBatch(self.table, codes, entries, entry_rows) for codes, entries, entry_rows in rows.planned]
        codes, entries = rows.codes, rows.entries
        table = self.table
        lengths = table.lengths[codes]
        order = np.argsort(lengths, kind="stable")
        ordered = codes[order]
        rank = np.full(len(table.inputs), -1, dtype=np.int64)
        rank[ordered] = np.arange(len(ordered), dtype=np.int64)
        entry_rank = rank[table.g_input[entries]]
        by_row = np.argsort(entry_rank, kind="stable")  # a row's gathers keep their request order
        entries, entry_rank = entries[by_row], entry_rank[by_row]
        out = []
        for start, stop in batch_cuts(lengths[order].tolist(), batch_tokens, overhead_tokens=overhead_tokens):
            lo, hi = (int(k) for k in entry_rank.searchsorted([start, stop]))
            out.append(TableBatch(table, ordered[start:stop], entries[lo:hi], entry_rank[lo:hi] - start))
        return out

    def read(self, batch: Any, launched: Any, values: dict[Any, Any], shared: dict[Any, float] | None) -> None:
        """A launched :class:`TableBatch`'s values, one per gather of the table it reads (and into ``shared``)."""
        batch_values = _values_array(launched)
        self._values[batch.entries] = batch_values
        values.update(dict.fromkeys(batch.codes.tolist()))  # the rows read (the values stay in the space)
        if shared is not None:
            shared.update(zip(self._shared_keys(batch.entries), batch_values.tolist()))

    def flats(self, todo: Sequence[int]) -> list[list[float]]:
        """Each of the units ``todo``'s gathers' values in request order (``outputs`` flattened), one
        list a unit: the values of all of them made Python floats in one call (the values are kept
        per gather of the table)."""
        from stereoset_eval.scoring.table import unit_entries

        return _cut_by_unit(self._values[unit_entries(self.table, todo)].tolist(), todo, self._offsets)

    def outputs(self, i: int, values: Mapping[Any, Any]) -> list[list[float]]:
        table = self.table
        lo, hi = int(table.unit_requests[i]), int(table.unit_requests[i + 1])
        bounds = table.request_offsets[lo:hi + 1].tolist()
        unit = self._values[bounds[0]:bounds[-1]].tolist()
        return [unit[start - bounds[0]:stop - bounds[0]] for start, stop in zip(bounds, bounds[1:])]


def _cut_by_unit(flat: list[float], todo: Sequence[int], offsets: Sequence[int]) -> list[list[float]]:
    """``flat`` (the values of the units ``todo``, unit by unit) cut into one list per unit, unit
    ``i`` holding ``offsets[i + 1] - offsets[i]`` of them."""
    out, start = [], 0
    for i in todo:
        stop = start + offsets[i + 1] - offsets[i]
        out.append(flat[start:stop])
        start = stop
    return out


def _state_columns(prepared: Sequence[Prepared]) -> dict[str, list[Any]]:
    """Every unit's state as one column per field (the fields of the first unit's state)."""
    return {name: [p.state[name] for p in prepared] for name in prepared[0].state} if prepared else {}


def _values_array(launched: Any) -> Any:
    """A launched batch's values, every row's gathers in row order, as one array (a scorer's handle
    gives them as an array; one that gives a list, or a list per row, is converted)."""
    import numpy as np

    if hasattr(launched, "array"):
        return launched.array()
    return np.asarray(_flat_values(launched), dtype=np.float64)


def _lengths(sequences: Sequence[Sized]) -> Any:
    """``len`` of each of ``sequences``, as an int64 array."""
    import numpy as np

    return np.fromiter(map(len, sequences), dtype=np.int64, count=len(sequences))


def _flat_values(launched: Any) -> list[float]:
    """A launched batch's values, every row's gathers in row order as one list (a scorer's handle
    gives them flat; a launcher that takes rows gives one list per row)."""
    return launched.flat() if hasattr(launched, "flat") else [v for out in launched.result() for v in out]


def _first_use(codes: Any) -> Any:
    """The distinct ``codes`` in order of first appearance."""
    import numpy as np

    _, first = np.unique(codes, return_index=True)
    return codes[np.sort(first)]
