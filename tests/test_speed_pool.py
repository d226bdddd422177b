"""speed.pool: one implementation's rounds over several worker processes, merged as one result."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from speed.cell import CellSpec  # noqa: E402
from speed.pool import PooledWorker, merge_results  # noqa: E402

SPEC = CellSpec(impl="ours", model="m", model_path="p", kind="masked", method="pll", dataset="crows-pairs",
                data_dir="d", n_items=None, warmup_items=0, threads=None, batch_tokens=8192, minicons_batch_size=32)


class FakeWorker:
    """A worker whose k-th run takes ``times[k]`` s and whose numbers are ``scores``."""

    def __init__(self, times: list[float], scores: dict[str, float], *, ready: str = "ready",
                 fail_at: int | None = None, peak: float = 100.0) -> None:
        self.spec, self.state = SPEC, {"status": "starting"}
        self.times, self.scores, self.ready, self.fail_at, self.peak = times, scores, ready, fail_at, peak
        self.ran: list[float] = []

    def wait_ready(self) -> dict[str, Any]:
        self.state = {"status": self.ready, "reason": "no model"} if self.ready != "ready" else {"status": "ready"}
        return self.state

    def run_once(self) -> dict[str, Any]:
        if self.fail_at is not None and len(self.ran) == self.fail_at:
            return {"status": "error", "reason": "worker exited with -9"}
        self.ran.append(self.times[len(self.ran)])
        return {"status": "ok", "wall_s": self.ran[-1]}

    def finish(self) -> dict[str, Any]:
        wall = self.ran
        if not wall:  # as speed.cell's session answers
            return {"status": "error", "reason": "finished before any timed run"}
        return {"status": "ok", "load_s": 1.0, "peak_rss_mb": self.peak, "peak_gpu_mb": None, "rss_after_load_mb": 50.0,
                "threads": 2, "rounds": len(wall), "max_abs_diff_between_runs": 0.0, "scores": self.scores,
                "n_sentences": len(self.scores), "model_s_runs": [w - 0.1 for w in wall],
                "timing": {"wall_s_runs": wall, "cpu_s_runs": [2 * w for w in wall], "warmup_wall_s": [9.0],
                           "loadavg_1min_during": [1.0] * len(wall), "wall_s_median": sorted(wall)[len(wall) // 2]},
                "extra": {"tokenize_wall_s_runs": [0.01] * len(wall), "tokenize_wall_s_median": 0.01,
                          "tokenize_rounds": len(wall), "forward_rows": 7}}


def test_rounds_go_to_each_process_in_turn_and_merge_in_run_order() -> None:
    a = FakeWorker([1.0, 1.1, 1.2], {"s1": -1.0, "s2": -2.0}, peak=300.0)
    b = FakeWorker([2.0, 2.1], {"s1": -1.0, "s2": -2.000001})
    pool = PooledWorker([a, b])
    assert pool.wait_ready() == {"status": "ready"}
    walls = [pool.run_once()["wall_s"] for _ in range(5)]
    assert walls == [1.0, 2.0, 1.1, 2.1, 1.2]
    merged = pool.finish()
    assert merged["timing"]["wall_s_runs"] == walls and merged["timing"]["wall_s_median"] == 1.2
    assert merged["timing"]["cpu_s_runs"] == [2 * w for w in walls]
    assert merged["model_s_runs"] == pytest.approx([w - 0.1 for w in walls])
    assert merged["rounds"] == 5 and merged["processes"] == 2 and merged["process_wall_s_medians"] == [1.1, 2.1]
    assert merged["peak_rss_mb"] == 300.0 and merged["scores"] == a.scores
    assert merged["max_abs_diff_between_runs"] == pytest.approx(1e-6)
    assert merged["extra"]["tokenize_rounds"] == 5 and merged["extra"]["forward_rows"] == 7


def test_one_process_is_passed_through_unchanged() -> None:
    a = FakeWorker([1.0, 1.5], {"s": -1.0})
    pool = PooledWorker([a])
    pool.wait_ready()
    pool.run_once()
    pool.run_once()
    assert pool.finish() == a.finish()


def test_a_process_given_no_round_is_left_out() -> None:
    a, b = FakeWorker([1.0], {"s": -1.0}), FakeWorker([2.0], {"s": -1.0})
    pool = PooledWorker([a, b])
    pool.wait_ready()
    pool.run_once()
    merged = pool.finish()
    assert merged["timing"]["wall_s_runs"] == [1.0] and "processes" not in merged


def test_a_process_that_cannot_start_or_fails_says_which() -> None:
    pool = PooledWorker([FakeWorker([1.0], {}), FakeWorker([1.0], {}, ready="error")])
    state = pool.wait_ready()
    assert state["status"] == "error" and state["reason"] == "process 2 of 2: no model"
    pool = PooledWorker([FakeWorker([1.0, 1.0], {"s": 0.0}), FakeWorker([1.0], {"s": 0.0}, fail_at=0)])
    pool.wait_ready()
    assert pool.run_once()["status"] == "ok"
    reply = pool.run_once()
    assert reply == {"status": "error", "reason": "process 2 of 2: worker exited with -9"}
    assert pool.finish() == reply


def test_processes_that_scored_different_sentences_are_an_error() -> None:
    results = [FakeWorker([1.0], {"s1": 0.0}), FakeWorker([1.0], {"s2": 0.0})]
    for w in results:
        w.run_once()
    merged = merge_results([w.finish() for w in results])
    assert merged == {"status": "error", "reason": "its 2 processes scored different sentences"}


def test_an_empty_pool_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        PooledWorker([])
