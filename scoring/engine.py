"""Cache-aware execution of a method's units: group, deduplicate, batch, reduce, commit.

Units are grouped by :func:`~stereoset_eval.scoring.requests.plan_groups` (shortest first, about one token
budget per group; an item's units together where the method's units of one item share inputs). For each group with uncached units: identical inputs are merged, cut into
padded batches under the budget, run, reduced by the method, and committed to the cache in one
transaction. Groups depend only on the units and the budget, never on what is cached, so an
interrupted run recomputes its unfinished group with exactly the same batches (identical
numbers) and at most that one group. Units prepared as one request table
(:class:`~stereoset_eval.scoring.engine_rows.TableRows`) are grouped, where one more pass costs
at least a budget of tokens, by a batch plan made once for the whole run: each group runs the
planned batches its units need that have not run, whole, so a resumed run's numbers equal an
uninterrupted run's.

On a device whose launches return before it has finished (CUDA), groups overlap by one: group
*k* is read back, reduced and committed once group *k+1*'s batches are queued behind it, so
merging, reducing, cache writes and the next batches' tensors are made while the device
computes (the issue-19 GPU runs were bound by that host work). With values shared across
methods, *k* is read back before *k+1* looks for them, and reduced and committed after *k+1* is
queued. Same batches, same values, same commits in the same order; only when the host waits
changes.

With values shared across methods, a group that reuse left with only a few rows to run (under half
a budget) waits for the next such groups, and they run together in batches of about one budget:
a method that follows another on the same sentences (``pll-word-l2r`` after ``pll``) has a few
new rows in every group, and one small batch per group cost more in fixed per-pass overhead than
its rows (issue 19: tiny-bert ``pll-word-l2r`` after ``pll`` over CrowS-Pairs ran 15,651 rows in
201 batches). Each group is still reduced and committed on its own, in group order.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from stereoset_eval.scoring.copies import CopyTable
from stereoset_eval.scoring.engine_rows import CopyRows, RequestRows, TableRows
from stereoset_eval.scoring.methods.base import Method, Prepared, UnitSpec
from stereoset_eval.scoring.records import SentenceResult
from stereoset_eval.scoring.requests import BATCH_OVERHEAD_TOKENS, BatchRow, padded_cost

LaunchBatch = Callable[[Sequence[BatchRow]], "Launched"]  # a scorer's ``launch``
Commit = Callable[[dict[str, list[SentenceResult]]], None]  # key -> results (the cache stores to_json())


class Launched(Protocol):
    """A queued batch (:meth:`~stereoset_eval.scoring.scorers.Scorer.launch`): ``result()`` gives,
    per row, the log-probabilities of its gathers."""

    def result(self) -> list[list[float]]: ...


TIMING_FIELDS = ("launch_s", "read_s")  # RunStats.to_dict()'s wall-time entries: they differ between any two runs


@dataclass
class RunStats:
    """What :func:`execute` did (for the provenance): forward rows run and reused, every
    out-of-memory halving as ``(rows before, rows after)``, whether each commit group's
    host work overlapped the next group's forward passes (``overlap``), and whether the commit
    groups' rows ran as one launch, cut into batches together (``one_launch``).

    ``launch_s`` and ``read_s`` say where the run's time went: wall seconds spent launching the
    batches (on a device that runs synchronously, CPU, the forward passes themselves; on CUDA,
    queueing them) and bringing their values back to the host (on CUDA, waiting for the device).
    Their sum is the host's time in the model; the rest of the run's wall time is host work
    (tokenizing, planning, reduction, records). Issue 35 needed it to tell a slow forward pass
    from slow host work.
    """

    rows_computed: int = 0
    rows_reused: int = 0
    batches: int = 0
    oom_halvings: list[tuple[int, int]] = field(default_factory=list)
    overlap: bool = False
    one_launch: bool = False
    launch_s: float = 0.0
    read_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The provenance's ``run.execution``: the counts, then the :data:`TIMING_FIELDS`."""
        return {"rows_computed": self.rows_computed, "rows_reused": self.rows_reused, "batches": self.batches,
                "oom_halvings": [list(h) for h in self.oom_halvings], "overlap": self.overlap,
                "one_launch": self.one_launch, "launch_s": round(self.launch_s, 4), "read_s": round(self.read_s, 4)}


def out_of_memory_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "the batch did not fit" (torch's device OOM errors)."""
    import torch

    kinds: list[type[BaseException]] = []
    for owner, name in ((torch, "OutOfMemoryError"), (torch.cuda, "OutOfMemoryError")):
        kind = getattr(owner, name, None)
        if isinstance(kind, type) and kind not in kinds:
            kinds.append(kind)
    return tuple(kinds)


def launch_halving(launch: LaunchBatch, batch: Sequence[BatchRow], stats: RunStats,
                   oom: tuple[type[BaseException], ...]) -> list[tuple[Sequence[BatchRow], Launched]]:
    """``[(batch, launch(batch))]``; on an out-of-memory error, the two halves one after the other
    (and so on down to single rows, which re-raise). Each halving is recorded in ``stats``; the
    numbers differ from one batch by float32 batch noise only."""
    try:
        return [(batch, launch(batch))]
    except oom:
        if len(batch) < 2:
            raise
    _free_device_cache()
    half = (len(batch) + 1) // 2
    stats.oom_halvings.append((len(batch), half))
    return launch_halving(launch, batch[:half], stats, oom) + launch_halving(launch, batch[half:], stats, oom)


def _free_device_cache() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic cyclic garbage collection while scoring: the run allocates hundreds of
    thousands of small acyclic objects (requests, rows, results), and the collector's repeated
    passes over them cost up to a fifth of a fixture model's run (measured with cProfile).
    :func:`_collect_young`, checked after each group, still frees any cycle once enough new objects
    were made, looking at new objects only."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


YOUNG_OBJECTS_PER_PASS = 1_000_000  # net new tracked objects between two young collections during a run


def _collect_young() -> None:
    """Collect generations 0 and 1 (never a full pass) once ``YOUNG_OBJECTS_PER_PASS`` more tracked
    objects are alive than at the last pass: a safety net for cycles, of which scoring makes almost none.

    A pass after every commit group cost 2-5 % of a fixture model's run (598 passes in a
    three-method study over CrowS-Pairs, cProfile). At 200,000 objects (issue 19, tenth session)
    every CrowS-Pairs-sized run still paid one pass of 0.09-0.24 s (tiny-bert ``pll``,
    ``crows-nangia``, ``pll-word-l2r`` over all 1,508 pairs: 11 passes found 50 unreachable objects
    in all), because a pass walks every young object still alive — the run's requests and rows.
    Once the run ends those are freed, and the collection that follows ``gc.enable()`` took
    5-10 ms. The cost of a pass grows with the objects it walks, so fewer, larger passes cost a
    long run no more in all, and a run of fewer than a million objects none."""
    if gc.get_count()[0] >= YOUNG_OBJECTS_PER_PASS:
        gc.collect(1)


Space = RequestRows | CopyRows | TableRows  # the form of the rows (engine_rows)


@dataclass
class _Group:
    """One commit group on its way: its units, the values read so far (a row's key -> what its
    gathers read, :mod:`~stereoset_eval.scoring.engine_rows`) and the keys of its rows that run in a
    batch (the others were reused)."""

    todo: list[int]
    values: dict[Any, Any] = field(default_factory=dict)
    to_run: list[Any] = field(default_factory=list)


@dataclass
class _Launch:
    """Groups whose rows run in the same batches and those batches once launched (emptied once
    read back): one group and its rows (:meth:`of`), or small groups collected by :meth:`add`."""

    space: Space
    groups: list[_Group] = field(default_factory=list)
    rows: Any = None  # one group's rows as merged (:meth:`of`)
    parts: list[Any] = field(default_factory=list)  # the collected groups' rows (:meth:`add`): joined when it starts
    launched: list[tuple[Sequence[BatchRow], Launched]] = field(default_factory=list)
    # the collected rows' keys and longest input, kept as groups are added: rebuilding them for every
    # group that might join cost ~14 ms of a pll-word-l2r run after pll over CrowS-Pairs (issue 35)
    _keys: set[Any] = field(default_factory=set)
    _longest: int = 0

    @classmethod
    def of(cls, space: Space, group: _Group, rows: Any) -> "_Launch":
        return cls(space, [group], rows)

    def add(self, group: _Group, rows: Any) -> None:
        """Collect a small group: its rows join the others' (an input two groups need runs once)."""
        self.groups.append(group)
        keys = self.space.keys(rows)
        group.to_run += keys
        self.parts.append(rows)
        self._keys.update(keys)
        self._longest = max(self._longest, self.space.longest(rows))

    def batch_rows(self) -> Any:
        return self.space.join(self.parts) if self.parts else self.rows

    def keys(self) -> set[Any]:
        return self._keys if self.parts else set(self.space.keys(self.rows))

    def cost_with(self, rows: Any) -> int:
        """Padded tokens of one batch of the collected rows and ``rows``."""
        more = set(self.space.keys(rows)).difference(self._keys)
        return padded_cost(len(self._keys) + len(more), max(self._longest, self.space.longest(rows)))


def execute(method: Method, units: Sequence[UnitSpec], prepared: Sequence[Prepared], keys: Sequence[str],
            options: Mapping[str, Any], launch_batch: LaunchBatch, *, batch_tokens: int,
            cached: Mapping[str, list[Mapping[str, Any]]], commit: Commit | None = None,
            progress: bool = False, overhead_tokens: int = BATCH_OVERHEAD_TOKENS,
            shared: dict[Any, float] | None = None, stats: RunStats | None = None,
            overlap: bool = False, copy_table: CopyTable | None = None) -> list[list[SentenceResult]]:
    """Results for every unit (cached or computed), in unit order.

    Args:
        launch_batch: queues one list of :class:`~stereoset_eval.scoring.requests.BatchRow` (a
            scorer's ``launch``) and returns a handle whose ``result()`` gives per row the
            log-probabilities of its gathers.
        cached: key -> cached unit results as the cache stores them (lists of
            :meth:`SentenceResult.to_json` objects); these units are not recomputed.
        commit: called once per computed group with its key -> results, in group order. Without
            it (and without ``overlap``), units that run as copies or table rows are reduced in one
            reduction once every value is read: the same results, ~10-20 ms of per-group calls fewer;
            and (without ``progress`` too) masked copies run as one launch: every group's rows cut
            into batches together (:class:`RunStats` ``one_launch``), so rows of one length fill
            whole batches without an attention mask (tiny-roberta ``crows-nangia`` over CrowS-Pairs:
            198 of 221 batches masked → 21 of 199). Numbers equal to float32 batch noise.
        progress: show a tqdm bar counting sentences (with sentences/s); the groups then launch one
            by one, so that it moves.
        overhead_tokens: the fixed cost of a forward pass in tokens, for
            :func:`~stereoset_eval.scoring.requests.plan_batches` (batch composition only: numbers move by
            float32 noise at most).
        shared: ``(row key, position, target) -> log p`` computed by earlier methods of the run on
            the same model and scorer path (:class:`~stereoset_eval.scoring.shared_work.SharedWork`):
            a row whose every gather is there is not run again; computed values are added. A group
            that reuse leaves under half a budget of rows to run waits for the next such groups
            (up to one budget in all), and their rows run in the same batches: batch composition
            then depends on what was reused, as the contract of shared values allows (numbers
            equal to float32 batch noise); an interruption loses the waiting groups too.
        stats: filled with what ran (:class:`RunStats`).
        overlap: for a device whose launches return before it has finished (CUDA): a group is
            read back, reduced and committed only after the next group's batches are queued behind
            it (with ``shared``, read back before the next group looks there, then reduced and
            committed after it is queued), so that host work runs while the device computes. The
            batches, the values and the commits (and their order) are the same as without it; an
            interruption loses at most the group being launched, as without it (every group
            launched in full is read back and committed before the error propagates).
        copy_table: the run's :class:`~stereoset_eval.scoring.copies.CopyTable` (with ``shared``: the
            model's one table, :meth:`SharedWork.copy_table`, which keeps the masked copies' values by
            code for the methods after this one: :meth:`CopyTable.known_values`). Units prepared as masked
            copies run as codes (:class:`~stereoset_eval.scoring.engine_rows.CopyRows`) when every unit
            has copies and, with ``shared``, a table is given; otherwise as requests. Same inputs, same
            gathers, numbers equal to float32 batch noise. Units prepared as rows of one
            :class:`~stereoset_eval.scoring.table.RequestTable` run as its codes
            (:class:`~stereoset_eval.scoring.engine_rows.TableRows`): the request path's rows and
            batches, so the same numbers, and ``shared`` keyed as the request path keys it.
    """
    stats = stats if stats is not None else RunStats()
    stats.overlap = overlap
    space: Space = RequestRows(prepared)
    if CopyRows.applies(prepared) and (shared is None or copy_table is not None):
        space = CopyRows(prepared, copy_table if copy_table is not None else CopyTable(), share=shared is not None)
    elif TableRows.applies(prepared):
        space = TableRows(prepared)
    # many units at once where the method has it: a request table's rows, or masked copies
    rows_reduce = method.reduce_rows if isinstance(space, (TableRows, CopyRows)) else None
    oom = out_of_memory_errors()
    results: list[list[SentenceResult] | None] = [
        [SentenceResult.from_json(d) for d in cached[k]] if k in cached else None for k in keys]
    bar = None
    if progress:
        n_sentences = sum(len(u.sentence_ids) for u in units)
        done = sum(len(u.sentence_ids) for u, r in zip(units, results) if r is not None)
        bar = _progress_bar(n_sentences, done, method.name)

    # Nothing to commit and no device to overlap: the units reduced at once when the run's values are
    # all read, in one reduction (the values stay in the space's arrays until then). Per unit the
    # same reduction of the same values; per group it cost a CrowS-Pairs method ~10-20 ms of calls.
    deferred: list[int] | None = [] if rows_reduce is not None and commit is None and not overlap else None
    # ... and, without a progress bar to advance group by group, masked copies run as one group and
    # one launch: all their rows cut into batches together, so rows of one length fill whole batches
    # that need no attention mask (a commit group holds a few inputs of each of many lengths). Same
    # rows, other batches: numbers equal to float32 batch noise. (A request table's batches are
    # planned for the whole run already.)
    one_launch = deferred is not None and bar is None and isinstance(space, CopyRows)
    stats.one_launch = one_launch

    def reduce_units(todo: list[int], values: dict[Any, Any]) -> None:
        """Reduce the units ``todo`` into ``results`` and commit them."""
        if rows_reduce is not None:  # the units at once, each unit's values as one list
            flats = space.flats(todo)  # type: ignore[union-attr]
            reduced = rows_reduce(space.columns, todo, flats, options)  # type: ignore[union-attr]
        else:
            reduced = [method.reduce(units[i], prepared[i], space.outputs(i, values), options) for i in todo]
        if rows_reduce is None or not method.plain_rows:  # (plain_rows: made in that form already)
            # through JSON, so a computed result equals the same result read from the cache
            reduced = SentenceResult.through_json_units(reduced, fresh_lists=method.fresh_lists)
        for i, result in zip(todo, reduced):
            results[i] = result
        if commit is not None:
            commit({keys[i]: result for i, result in zip(todo, reduced)})

    def finish(launch: _Launch) -> None:
        """Reduce each of the launch's groups (or keep it for the run's one reduction), commit it,
        and advance the bar."""
        for group in launch.groups:
            if deferred is not None:
                deferred.extend(group.todo)
            else:
                reduce_units(group.todo, group.values)
                _collect_young()
            if bar is not None:
                bar.update(sum(len(units[i].sentence_ids) for i in group.todo))

    def start(launch: _Launch) -> _Launch:
        """Cut the launch's rows into batches and queue them."""
        rows = launch.batch_rows()
        for batch in space.batches(rows, batch_tokens, overhead_tokens):
            began = time.perf_counter()
            launch.launched += launch_halving(launch_batch, batch, stats, oom)
            stats.launch_s += time.perf_counter() - began
            stats.batches += 1
            stats.rows_computed += len(batch)
        return launch

    ready: deque[_Launch] = deque()  # values on the host, not yet reduced and committed (group order)
    in_flight: _Launch | None = None  # launched, not yet read back
    waiting: _Launch | None = None  # small groups (shared values only), not launched yet

    def read_now() -> None:
        """Bring the launch in flight to the host now."""
        nonlocal in_flight
        if in_flight is not None:
            ready.append(_read(in_flight, shared, stats))
            in_flight = None

    def queued(launch: _Launch) -> None:
        """After ``launch`` was started: the one before it is read back, then (overlap) it waits."""
        nonlocal in_flight
        read_now()
        if overlap:
            in_flight = launch
        else:
            ready.append(_read(launch, shared, stats))

    def finish_ready() -> None:
        """Reduce and commit every launch read back so far, in order."""
        while ready:
            finish(ready.popleft())

    try:
        with collector_paused():
            items = [u.item_id for u in units] if method.item_shares_inputs else None
            plans = [range(len(units))] if one_launch else space.groups(batch_tokens, items, overhead_tokens)
            for plan in plans:
                todo = [i for i in plan if results[i] is None]
                if not todo:
                    continue
                rows = space.merge(todo)
                if shared is not None:  # the values of the launch in flight first: this group looks there
                    read_now()
                group = _Group(todo)
                if one_launch:
                    queued(start(_Launch.of(space, group, rows if shared is None else
                                            space.reuse(rows, shared, group.values, stats))))
                    continue
                if shared is not None:
                    left = space.reuse(rows, shared, group.values, stats)
                    small = _small(space, left, rows, batch_tokens)
                    if waiting is not None and not (small and waiting.cost_with(left) <= batch_tokens):
                        flushed, waiting = waiting, None
                        queued(start(flushed))
                        if not flushed.keys().isdisjoint(space.keys(left)):  # its rows were waiting there: read them
                            read_now()
                            left = space.reuse(left, shared, group.values, stats)
                            small = _small(space, left, rows, batch_tokens)
                    if small and (len(left) or waiting is not None):
                        if waiting is None:
                            waiting = _Launch(space)
                        waiting.add(group, left)
                        finish_ready()
                        continue
                    rows = left
                queued(start(_Launch.of(space, group, rows)))
                finish_ready()
            if waiting is not None:
                flushed, waiting = waiting, None
                queued(start(flushed))
            read_now()
            finish_ready()
            if deferred:
                reduce_units(deferred, {})
    except BaseException:
        # every group launched in full before the failure is committed, so a rerun reads it
        with contextlib.suppress(Exception):
            finish_ready()
            if in_flight is not None:
                finish(_read(in_flight, shared, stats))
        raise
    finally:
        if bar is not None:
            bar.close()
    assert None not in results
    return results  # type: ignore[return-value]


def _small(space: Space, left: Any, rows: Any, batch_tokens: int) -> bool:
    """True if reuse left ``left`` of the group's ``rows`` to run, and they fill at most half a budget."""
    if len(left) == len(rows):
        return False
    return 2 * padded_cost(len(left), space.longest(left)) <= batch_tokens


def _read(launch: _Launch, shared: dict[Any, float] | None, stats: RunStats) -> _Launch:
    """Bring the launch's batches to the host: into its groups' ``values`` (and ``shared`` when given);
    the time it took is added to ``stats.read_s``."""
    began = time.perf_counter()
    values = launch.groups[0].values if len(launch.groups) == 1 else {}
    for batch, launched in launch.launched:
        launch.space.read(batch, launched, values, shared)
    stats.read_s += time.perf_counter() - began
    if len(launch.groups) > 1 and not launch.space.keeps_values:
        for group in launch.groups:
            for key in group.to_run:
                group.values[key] = values[key]
    launch.launched = []
    return launch


def _progress_bar(total: int, initial: int, name: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="sent", desc=name, dynamic_ncols=True, smoothing=0.1)
