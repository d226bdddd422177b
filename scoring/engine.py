"""Cache-aware execution of a method's units: group, deduplicate, batch, reduce, commit.

Units are grouped by :func:`~stereoset_eval.scoring.requests.plan_groups` (shortest first, about one token
budget per group). For each group with uncached units: identical inputs are merged, cut into
padded batches under the budget, run, reduced by the method, and committed to the cache in one
transaction. Groups depend only on the units and the budget, never on what is cached, so an
interrupted run recomputes its unfinished group with exactly the same batches (identical
numbers) and at most that one group.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.scoring.methods.base import Method, Prepared, UnitSpec
from stereoset_eval.scoring.records import SentenceResult
from stereoset_eval.scoring.requests import BATCH_OVERHEAD_TOKENS, merge_requests, plan_batches, plan_groups

RunBatch = Callable[[Sequence[Any]], list[list[float]]]
Commit = Callable[[dict[str, list[SentenceResult]]], None]  # key -> results (the cache stores to_json())


def execute(method: Method, units: Sequence[UnitSpec], prepared: Sequence[Prepared], keys: Sequence[str],
            options: Mapping[str, Any], run_batch: RunBatch, *, batch_tokens: int,
            cached: Mapping[str, list[Mapping[str, Any]]], commit: Commit | None = None,
            progress: bool = False, overhead_tokens: int = BATCH_OVERHEAD_TOKENS) -> list[list[SentenceResult]]:
    """Results for every unit (cached or computed), in unit order.

    Args:
        run_batch: runs one list of :class:`~stereoset_eval.scoring.requests.BatchRow` (a scorer's ``run``).
        cached: key -> cached unit results as the cache stores them (lists of
            :meth:`SentenceResult.to_json` objects); these units are not recomputed.
        commit: called once per computed group with its key -> results.
        progress: show a tqdm bar counting sentences (with sentences/s).
        overhead_tokens: the fixed cost of a forward pass in tokens, for
            :func:`~stereoset_eval.scoring.requests.plan_batches` (batch composition only: numbers move by
            float32 noise at most).
    """
    results: list[list[SentenceResult] | None] = [
        [SentenceResult.from_json(d) for d in cached[k]] if k in cached else None for k in keys]
    n_sentences = sum(len(u.sentence_ids) for u in units)
    done = sum(len(u.sentence_ids) for u, r in zip(units, results) if r is not None)
    bar = _progress_bar(n_sentences, done, method.name) if progress else None
    try:
        for group in plan_groups([p.requests for p in prepared], batch_tokens):
            todo = [i for i in group if results[i] is None]
            if not todo:
                continue
            rows = merge_requests(r for i in todo for r in prepared[i].requests)
            values: dict[Any, dict[tuple[int, int], float]] = {}
            for batch in plan_batches(rows, batch_tokens, overhead_tokens=overhead_tokens):
                for row, out in zip(batch, run_batch(batch)):
                    values[row.key] = dict(zip(row.gather, out))
            fresh: dict[str, list[SentenceResult]] = {}
            for i in todo:
                outputs = [[values[r.key][g] for g in r.gather] for r in prepared[i].requests]
                # through JSON, so a computed result equals the same result read from the cache
                result = SentenceResult.through_json(method.reduce(units[i], prepared[i], outputs, options))
                results[i] = fresh[keys[i]] = result
            if commit is not None:
                commit(fresh)
            if bar is not None:
                bar.update(sum(len(units[i].sentence_ids) for i in todo))
    finally:
        if bar is not None:
            bar.close()
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


def _progress_bar(total: int, initial: int, name: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="sent", desc=name, dynamic_ncols=True, smoothing=0.1)
