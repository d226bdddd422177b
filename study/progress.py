"""Progress of a study on a Ray cluster, as the driver sees it: done / running / queued, nodes, ETA.

Workers announce each attempt of a job to a :class:`ProgressBoard` (a small Ray actor kept on
the head node, so it outlives any worker node); the driver reads the board between results. A
job announced twice was retried (its worker or node died, or it raised a retryable error).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence


class ProgressBoard:
    """Attempts per job index: ``(node id, host, pid, started at)`` — a Ray actor on the head node."""

    def __init__(self) -> None:
        self.attempts: dict[int, list[dict[str, Any]]] = {}

    def started(self, index: int, node_id: str, host: str, pid: int) -> int:
        """Record one attempt of job ``index``; returns the attempt's number (1, 2 …)."""
        self.attempts.setdefault(index, []).append({"node_id": node_id, "host": host, "pid": pid, "at": time.time()})
        return len(self.attempts[index])

    def snapshot(self) -> dict[int, list[dict[str, Any]]]:
        return {i: list(a) for i, a in self.attempts.items()}


def node_label(attempt: Mapping[str, Any]) -> str:
    """``host/node-id-prefix`` (several nodes may share a host)."""
    return f"{attempt.get('host', '?')}/{str(attempt.get('node_id', '?'))[:8]}"


@dataclass(frozen=True)
class Progress:
    """One look at the study: job keys done, running (with their node), queued, failed; an ETA."""

    done: tuple[str, ...]
    running: tuple[tuple[str, str], ...]
    queued: tuple[str, ...]
    failed: tuple[str, ...]
    retried: tuple[str, ...]
    elapsed_s: float
    eta_s: float | None
    running_nodes: Mapping[str, str] = field(default_factory=dict)  # job key -> node id (full)

    @property
    def total(self) -> int:
        return len(self.done) + len(self.running) + len(self.queued) + len(self.failed)

    def line(self) -> str:
        """One log line, e.g. ``jobs 3/14 done, 2 running (tiny-bert | StereoSet | pll on host/ab12cd34), …``."""
        running = ", ".join(f"{key} on {node}" for key, node in self.running)
        eta = f", ETA {self.eta_s:.0f} s" if self.eta_s is not None else ""
        failed = f", {len(self.failed)} failed" if self.failed else ""
        retried = f", {len(self.retried)} retried" if self.retried else ""
        return (f"jobs {len(self.done)}/{self.total} done, {len(self.running)} running"
                + (f" ({running})" if running else "") + f", {len(self.queued)} queued{failed}{retried}{eta}")


def estimate_eta(*, elapsed_s: float, n_done: int, n_left: int, parallel: int) -> float | None:
    """Seconds left: the mean wall time per finished job so far, over the jobs left, ``parallel`` at a time."""
    if n_done == 0 or n_left == 0:
        return None if n_left else 0.0
    per_job = elapsed_s / n_done * max(1, min(parallel, n_done))  # wall time one job took, on average
    return per_job * n_left / max(1, parallel)


def build_progress(keys: Sequence[str], *, done: set[int], failed: set[int], in_flight: set[int],
                   attempts: Mapping[int, Sequence[Mapping[str, Any]]], started_at: float) -> Progress:
    """A :class:`Progress` from the driver's bookkeeping and the board's attempts."""
    elapsed = time.monotonic() - started_at
    running = [i for i in sorted(in_flight) if attempts.get(i)]
    queued = [i for i in range(len(keys)) if i not in done and i not in failed and i not in running]
    n_left = len(running) + len(queued)
    return Progress(
        done=tuple(keys[i] for i in sorted(done)),
        running=tuple((keys[i], node_label(attempts[i][-1])) for i in running),
        queued=tuple(keys[i] for i in queued),
        failed=tuple(keys[i] for i in sorted(failed)),
        retried=tuple(keys[i] for i in sorted(attempts) if len(attempts[i]) > 1),
        elapsed_s=round(elapsed, 3),
        eta_s=estimate_eta(elapsed_s=elapsed, n_done=len(done), n_left=n_left, parallel=max(1, len(running))),
        running_nodes={keys[i]: str(attempts[i][-1].get("node_id")) for i in running},
    )
