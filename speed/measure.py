"""Timing: a warm-up, then repeated runs; wall and process CPU time, peak RSS, load average.

Wall time is what a user waits; process CPU time (all threads) is far less sensitive to other
tenants on a shared machine, so both are kept and both get medians. Peak RSS is the process's
high-water mark (``ru_maxrss``), which is why the benchmark runs each implementation in its own
process by default.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Timing:
    """Timed runs of one implementation (one per round), with the warm-up and the load during each."""

    wall_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)
    warmup_wall_s: list[float] = field(default_factory=list)
    loadavg_1min: list[float | None] = field(default_factory=list)

    @property
    def wall_median(self) -> float:
        return statistics.median(self.wall_s)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu_s)

    def to_dict(self) -> dict[str, Any]:
        return {
            "wall_s_median": self.wall_median,
            "wall_s_runs": self.wall_s,
            "wall_s_spread": (max(self.wall_s) - min(self.wall_s)) / self.wall_median if self.wall_median else 0.0,
            "cpu_s_median": self.cpu_median,
            "cpu_s_runs": self.cpu_s,
            "warmup_wall_s": self.warmup_wall_s,
            "loadavg_1min_during": self.loadavg_1min,
        }


def loadavg() -> list[float]:
    """1, 5 and 15 minute load averages ([] where the OS has none)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return []


def time_runs(run: Callable[[], Any], *, repeats: int, warmup: Callable[[], Any] | None) -> tuple[Timing, Any]:
    """Run ``warmup`` once (untimed in the medians), then ``run`` ``repeats`` times.

    Returns the timings and the last run's result.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    timing = Timing()
    if warmup is not None:
        start = time.perf_counter()
        warmup()
        timing.warmup_wall_s.append(time.perf_counter() - start)
    result = None
    for _ in range(repeats):
        result = None
        timing.loadavg_1min.append((loadavg() or [None])[0])
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = run()
        wall1, cpu1 = time.perf_counter(), time.process_time()
        timing.wall_s.append(wall1 - wall0)
        timing.cpu_s.append(cpu1 - cpu0)
    return timing, result


def peak_rss_mb() -> float | None:
    """The process's peak resident set size so far, in MiB (None if unknown)."""
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 1024 / 1024 if sys.platform == "darwin" else peak / 1024  # bytes on macOS, KiB on Linux
    except ImportError:
        pass
    try:
        import psutil

        info = psutil.Process().memory_info()
        return getattr(info, "peak_wset", info.rss) / 2**20
    except ImportError:
        return None


def peak_gpu_mb(device: str) -> float | None:
    """Peak CUDA memory allocated by torch in this process, in MiB (None on CPU)."""
    if not device.startswith("cuda"):
        return None
    import torch

    return torch.cuda.max_memory_allocated(device) / 2**20


def synchronize(device: str) -> None:
    """Wait for queued GPU work, so that a timer read next covers it (no-op on CPU)."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize(device)


def current_rss_mb() -> float | None:
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        return None
