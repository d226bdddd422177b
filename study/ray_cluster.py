"""The driver's side of a study on a Ray cluster: submit, retry, gather, commit, report.

* The driver owns the cache. Jobs of one (model, method) run one after another, each sent the
  driver's results for that model and method as they stand (so a sentence two benchmarks share
  is computed once, in the first job, exactly as the local executor does — and the numbers are
  byte-identical to it); jobs of different (model, method) run in parallel. Each result's new
  cache rows are committed to the driver's cache as it arrives.
* Fault tolerance is Ray's: a task whose worker or node dies is resubmitted (``max_retries``),
  as is one that raised an error in :data:`RETRYABLE` (transient I/O). The toolkit's own errors
  (bad input, a weights mismatch) are never retried. A job that still fails does not stop the
  others: when every other job has finished and been committed, :class:`JobsFailedError` names
  each failed job's model and method.
* Progress: workers announce each attempt to a :class:`~stereoset_eval.study.progress.ProgressBoard`
  actor on the head node; the driver reports done / running (with node) / queued and an ETA.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item
from stereoset_eval.study.node_worker import (NodeResult, WeightsMismatchError, check_weights, local_weights_sha256,
                                              model_column, score_on_node)
from stereoset_eval.study.plan import Job
from stereoset_eval.study.progress import Progress, ProgressBoard, build_progress

#: exceptions a task may raise that are safe to retry (transient I/O: a hub or file-system hiccup)
RETRYABLE: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
DEFAULT_MAX_RETRIES = 3
HEAD_NODE_RESOURCE = "node:__internal_head__"  # Ray's marker resource of the head node
log = logging.getLogger(__name__)
OnProgress = Callable[[Progress], None]


class JobsFailedError(StereosetEvalError):
    """Jobs failed after their retries (every other job finished and its scores are cached)."""


@dataclass
class ClusterOutcome:
    """What the driver learnt besides the results: attempts per job, the nodes used, weights seen."""

    attempts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    retried: list[str] = field(default_factory=list)
    nodes: dict[str, list[str]] = field(default_factory=dict)  # job key -> node ids of its attempts
    weights_sha256: dict[str, str] = field(default_factory=dict)  # model name -> the driver's record
    committed_rows: int = 0

    def describe(self) -> dict[str, Any]:
        return {"retried_jobs": list(self.retried), "attempts": {k: len(v) for k, v in self.attempts.items()},
                "job_nodes": dict(self.nodes), "weights_sha256": dict(self.weights_sha256),
                "rows_committed_at_driver": self.committed_rows}


def _error_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}"[:800]  # one line, long enough for paths


def run_jobs(ray: Any, jobs: Sequence[Job], items: Mapping[str, Sequence[Item]], settings: Any, *,
             run_job: Callable[..., Any], task_options: Mapping[str, Any],
             on_result: Callable[[Any], None] | None = None,
             on_progress: OnProgress | None = None, poll_s: float = 0.5,
             outcome: ClusterOutcome | None = None) -> list[Any]:
    """Run ``jobs`` on the connected cluster; results (``JobResult``) in job order.

    Args:
        run_job: scores one job in a worker (:func:`stereoset_eval.study.executors.run_job`).
        task_options: ``ray.remote`` options of each task (CPUs, GPUs, ``max_retries``).
        on_progress: called with a :class:`Progress` whenever it changes (default: logged).
        outcome: filled with attempts, retried jobs, nodes and the weights record.
    """
    from stereoset_eval.scoring.cache import ScoreCache

    outcome = outcome if outcome is not None else ClusterOutcome()
    report = on_progress or (lambda p: log.info("%s", p.line()))
    keys = [j.key for j in jobs]
    cache = ScoreCache(settings.cache_dir) if settings.use_cache else None
    board = None
    try:
        board = ray.remote(num_cpus=0, max_restarts=0)(ProgressBoard).options(
            resources={HEAD_NODE_RESOURCE: 0.001}).remote()
        task = ray.remote(**{"retry_exceptions": list(RETRYABLE), **task_options})(score_on_node)
        refs = {name: ray.put(list(its)) for name, its in items.items() if any(j.benchmark == name for j in jobs)}
        for job in jobs:  # the driver's record: its own copy of the weights, where it has one
            if job.model.name not in outcome.weights_sha256:
                sha = local_weights_sha256(job.model.id, job.model.revision, cache)
                if sha:
                    outcome.weights_sha256[job.model.name] = sha
        chains = _chains(jobs)
        next_of = {i: c[k + 1] if k + 1 < len(c) else None for c in chains for k, i in enumerate(c)}

        def submit(i: int) -> Any:
            job = jobs[i]
            known = ({k: v for k, _m, _me, v in cache.rows(model=model_column(job.model.id), method=job.method)}
                     if cache is not None else {})
            return task.remote(job, refs[job.benchmark], settings, known, index=i,
                               expected_weights=outcome.weights_sha256.get(job.model.name), run_job=run_job,
                               board=board)

        in_flight = {submit(c[0]): c[0] for c in chains}
        results: list[Any] = [None] * len(jobs)
        failures: dict[int, str] = {}
        started, last_line = time.monotonic(), None
        while in_flight:
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=poll_s)
            for ref in done:
                i = in_flight.pop(ref)
                try:
                    got: NodeResult = ray.get(ref)
                    _accept(got, jobs[i], cache, outcome)
                    results[i] = got.result
                    if on_result is not None:
                        on_result(got.result)
                except Exception as exc:  # noqa: BLE001 - recorded, reported after every other job
                    failures[i] = _error_line(exc)
                    log.warning("job %s failed: %s", keys[i], failures[i])
                nxt = next_of.get(i)
                if nxt is not None:
                    in_flight[submit(nxt)] = nxt
            attempts = _board_snapshot(ray, board)
            progress = build_progress(keys, done={i for i, r in enumerate(results) if r is not None},
                                      failed=set(failures), in_flight=set(in_flight.values()), attempts=attempts,
                                      started_at=started)
            line = progress.line().rsplit(", ETA", 1)[0]
            if line != last_line or not in_flight:
                report(progress)
                last_line = line
        attempts = _board_snapshot(ray, board)
        outcome.attempts = {keys[i]: a for i, a in sorted(attempts.items())}
        outcome.retried = [keys[i] for i, a in sorted(attempts.items()) if len(a) > 1]
        outcome.nodes = {keys[i]: [str(x.get("node_id")) for x in a] for i, a in sorted(attempts.items())}
    finally:
        if cache is not None:
            cache.close()
        if board is not None:
            try:
                ray.kill(board)
            except Exception:  # noqa: BLE001 - gone with its node or the cluster already
                pass
    if failures:
        lines = [f"{jobs[i].model.name} ({jobs[i].model.id}), method {jobs[i].method} on {jobs[i].benchmark}: "
                 f"{msg} (attempts: {len(outcome.attempts.get(keys[i], [])) or 1})"
                 for i, msg in sorted(failures.items())]
        raise JobsFailedError(f"{len(failures)} of {len(jobs)} job(s) failed after retries (the other jobs' scores "
                              f"are cached; a rerun computes only what is missing): " + "; ".join(lines))
    return results


def _chains(jobs: Sequence[Job]) -> list[list[int]]:
    """Job indices grouped by (model, method), in job order: each group runs one job at a time."""
    chains: OrderedDict[tuple[str, str], list[int]] = OrderedDict()
    for i, job in enumerate(jobs):
        chains.setdefault((model_column(job.model.id), job.method), []).append(i)
    return list(chains.values())


def _accept(got: NodeResult, job: Job, cache: Any, outcome: ClusterOutcome) -> None:
    """Check the weights against the driver's record, then commit the job's new rows."""
    sha = got.result.provenance.get("model", {}).get("weights_sha256")
    where = f"node {got.node.get('host')}/{str(got.node.get('node_id'))[:8]}"
    if sha:
        check_weights(job, outcome.weights_sha256.setdefault(job.model.name, sha), sha, where)
    if cache is not None and got.rows:
        by_group: dict[tuple[str, str], dict[str, Any]] = {}
        for key, model, method, value in got.rows:
            by_group.setdefault((model, method), {})[key] = value
        for (model, method), entries in by_group.items():
            cache.put_many(entries, model=model, method=method)
        outcome.committed_rows += len(got.rows)


def _board_snapshot(ray: Any, board: Any) -> dict[int, list[dict[str, Any]]]:
    try:
        return ray.get(board.snapshot.remote(), timeout=30)
    except Exception:  # noqa: BLE001 - progress is best effort
        return {}


__all__ = ["ClusterOutcome", "JobsFailedError", "RETRYABLE", "WeightsMismatchError", "run_jobs"]
