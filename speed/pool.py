"""One implementation timed in several worker processes, its rounds taken by each in turn.

A process can fall into a slow state and keep it for many rounds: on the 2-core development
machine (issue 35, sixteenth and seventeenth sessions) a worker's forward passes ran ~25 % slower
for stretches of tens of seconds while another process of the same implementation, timed seconds
apart, did not; the floor's own processes fell into it too, and the floor's batches timed inside
ours' process slowed with ours. With one process per implementation, whichever process was unlucky
moved its implementation's median and every ratio with it. Spreading an implementation's rounds
over several fresh processes (as ``pyperf`` runs its benchmarks in many worker processes, since a
process's memory layout moves its timings) measures the implementation, not one process's luck.
Every implementation of a cell that gets pooled gets the same number of processes.
"""

from __future__ import annotations

import statistics
from typing import Any, Protocol, Sequence

from speed.cell import CellSpec
from speed.measure import Timing


class Worker(Protocol):
    spec: CellSpec
    state: dict[str, Any]

    def wait_ready(self) -> dict[str, Any]: ...

    def run_once(self) -> dict[str, Any]: ...

    def finish(self) -> dict[str, Any]: ...


class PooledWorker:
    """Several workers of one implementation behind the worker interface: each :meth:`run_once`
    goes to the next of them in turn, and :meth:`finish` merges what they measured
    (:func:`merge_results`)."""

    def __init__(self, workers: Sequence[Worker]) -> None:
        if not workers:
            raise ValueError("a pool needs at least one worker")
        self.workers, self.turn = list(workers), 0
        self.spec = self.workers[0].spec
        self.state: dict[str, Any] = {"status": "starting"}

    def wait_ready(self) -> dict[str, Any]:
        """Ready when every process is; otherwise the first process's status that is not ready."""
        states = [w.wait_ready() for w in self.workers]
        bad = [(k, s) for k, s in enumerate(states) if s.get("status") != "ready"]
        self.state = {"status": "ready"} if not bad else _in_process(*bad[0], len(states))
        return self.state

    def run_once(self) -> dict[str, Any]:
        k = self.turn % len(self.workers)
        self.turn += 1
        reply = self.workers[k].run_once()
        if reply.get("status") != "ok":
            self.state = _in_process(k, reply, len(self.workers))
            return self.state
        return reply

    def finish(self) -> dict[str, Any]:
        results = [w.finish() for w in self.workers]
        if self.state.get("status") not in ("ready", "starting"):
            return self.state
        used = results[:max(1, min(self.turn, len(results)))]  # a process never given a round has nothing to say
        return merge_results(used)


def _in_process(k: int, state: dict[str, Any], n: int) -> dict[str, Any]:
    """``state`` of process ``k`` of ``n``, its reason saying which process it was."""
    if n == 1:
        return state
    return {**state, "reason": f"process {k + 1} of {n}: {state.get('reason', '')}".rstrip(": ")}


def interleave(lists: Sequence[Sequence[Any]]) -> list[Any]:
    """The runs of processes taken in turn, back in the order they ran.

    >>> interleave([[1, 4, 7], [2, 5], [3, 6]])
    [1, 2, 3, 4, 5, 6, 7]
    """
    out: list[Any] = []
    for r in range(max((len(x) for x in lists), default=0)):
        out.extend(x[r] for x in lists if r < len(x))
    return out


def merge_extra(extras: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The implementations' own extras of several processes as one: lists named ``*_runs``
    interleaved (:func:`interleave`), ``X_median`` recomputed from ``X_runs`` where both are
    there, counts named ``*_rounds`` summed, everything else the first process's (plans and
    their counts do not differ between processes).

    >>> merge_extra([{"t_runs": [1.0, 3.0], "t_median": 2.0, "t_rounds": 2, "rows": 5},
    ...              {"t_runs": [10.0], "t_median": 10.0, "t_rounds": 1, "rows": 5}])
    {'t_runs': [1.0, 10.0, 3.0], 't_median': 3.0, 't_rounds': 3, 'rows': 5}
    """
    present = [e for e in extras if e]
    if not present:
        return None
    out = dict(present[0])
    for key, value in present[0].items():
        if key.endswith("_runs") and isinstance(value, list):
            out[key] = interleave([e.get(key) or [] for e in present])
            median_key = key[:-len("_runs")] + "_median"
            if median_key in out and out[key]:
                out[median_key] = statistics.median(out[key])
        elif key.endswith("_rounds") and isinstance(value, int):
            out[key] = sum(int(e.get(key) or 0) for e in present)
    return out


def merge_results(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What several processes of one implementation measured, as one worker's result.

    Timed runs, seconds in the model and the extras' runs are interleaved in the order they ran
    and their medians taken over all of them; peak memory is the largest process's; the numbers
    are the first process's, and ``max_abs_diff_between_runs`` also covers the differences
    between processes. ``processes`` and ``process_wall_s_medians`` say how the rounds fell.
    """
    if len(results) == 1:
        return results[0]
    for k, res in enumerate(results):
        if res.get("status") != "ok":
            return _in_process(k, res, len(results))
    first = results[0]
    timings = [r["timing"] for r in results]
    timing = Timing(wall_s=interleave([t["wall_s_runs"] for t in timings]),
                    cpu_s=interleave([t["cpu_s_runs"] for t in timings]),
                    warmup_wall_s=[w for t in timings for w in t["warmup_wall_s"]],
                    loadavg_1min=interleave([t["loadavg_1min_during"] for t in timings]))
    scores = first["scores"]
    if any(r["scores"].keys() != scores.keys() for r in results[1:]):
        return {"status": "error", "reason": f"its {len(results)} processes scored different sentences"}
    between = max((abs(v - scores[k]) for r in results[1:] for k, v in r["scores"].items()), default=0.0)
    gpu = [r["peak_gpu_mb"] for r in results if r.get("peak_gpu_mb") is not None]
    model_runs = [r.get("model_s_runs") for r in results]
    merged = {
        **first,
        "load_s": statistics.median(r["load_s"] for r in results),
        "timing": timing.to_dict(),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        "peak_gpu_mb": max(gpu) if gpu else None,
        "rss_after_load_mb": max(r["rss_after_load_mb"] for r in results),
        "rounds": sum(r["rounds"] for r in results),
        "max_abs_diff_between_runs": max([between] + [r["max_abs_diff_between_runs"] for r in results]),
        "extra": merge_extra([r.get("extra") for r in results]),
        "model_s_runs": interleave(model_runs) if all(model_runs) else None,  # type: ignore[arg-type]
        "processes": len(results),
        "process_wall_s_medians": [t["wall_s_median"] for t in timings],
    }
    return merged
