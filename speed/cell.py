"""One implementation of one method on one model, held ready and timed one run at a time.

The benchmark interleaves implementations: each round times every implementation once, so slow
changes in machine load (other tenants) hit all of them alike. A *worker* holds one
implementation set up (model loaded, inputs prepared, warmed up on its first run) and times a
single run per :meth:`run_once`; :meth:`finish` returns everything measured plus the numbers of
the last run.

* :class:`ProcessWorker` — the implementation lives in its own child process
  (``python -m speed.cell SPEC.json``), so peak RSS, allocator state and thread pools are
  its own; the parent talks to it over stdin/stdout (protocol lines start with ``@@bench``).
* :class:`InlineWorker` — the same in this process (fast; peak RSS is the process-wide maximum).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, TextIO


PREFIX = "@@bench "


@dataclass(frozen=True)
class CellSpec:
    """Everything one worker depends on (JSON-serialisable, passed to the child process).

    Attributes:
        warmup_items: the warm-up run (before the first timed run) scores the first N items
            (None: the whole slice; 0: no warm-up).
        threads: ``torch.set_num_threads`` (None: torch's default).
        device: ``cpu`` or ``cuda[:N]``; every implementation runs its model there.
        reference_autograd: ``as-reference`` (the reference loop keeps autograd where its
            reference does: metric.py) or ``off`` (inference mode everywhere, conservative).
    """

    impl: str
    model: str
    model_path: str
    kind: str
    method: str
    dataset: str
    data_dir: str
    n_items: int | None
    warmup_items: int | None
    threads: int | None
    batch_tokens: int
    minicons_batch_size: int
    device: str = "cpu"
    reference_autograd: str = "as-reference"


class _Session:
    """The measuring side of a worker: set up, then one timed run per call, then the result."""

    def __init__(self, spec: CellSpec) -> None:
        from speed.impls import CellContext, get_implementation
        from speed.inputs import load_slice
        from speed.measure import Timing, current_rss_mb

        self.spec, self.timing, self.output = spec, Timing(), None
        self.first_scores: dict[str, float] | None = None
        self.drift = 0.0  # max |Δ| between this implementation's own runs (determinism)
        self.model_s: list[float] = []  # per timed run, its seconds in the model (runners with ``model_seconds``)
        impl = get_implementation(spec.impl)
        reason = impl.unavailable()
        if reason is None and spec.method not in impl.methods:
            reason = f"{spec.impl} does not implement {spec.method}"
        self.skipped = reason
        if reason is not None:
            return
        import torch

        if spec.threads:
            torch.set_num_threads(spec.threads)
        self.threads = torch.get_num_threads()
        items = load_slice(Path(spec.data_dir), spec.dataset, spec.n_items)
        start = time.perf_counter()
        self.runner = impl.setup(CellContext(Path(spec.model_path), spec.kind, spec.method, spec.batch_tokens,
                                             spec.minicons_batch_size, spec.device, spec.reference_autograd))
        self.load_s = time.perf_counter() - start
        self.rss_after_load = current_rss_mb()
        self.prepared = self.runner.prepare(items)
        warm = items if spec.warmup_items is None else items[:spec.warmup_items]
        self.warm_prepared = self.runner.prepare(warm) if warm else None

    def ready(self) -> dict[str, Any]:
        return {"status": "skipped", "reason": self.skipped} if self.skipped else {"status": "ready"}

    def run_once(self) -> dict[str, Any]:
        from speed.measure import time_runs

        warmup = None
        if self.warm_prepared is not None and not self.timing.wall_s:
            warmup = lambda: self.runner.run(self.warm_prepared)  # noqa: E731 - before the first timed run only
        timing, self.output = time_runs(lambda: self.runner.run(self.prepared), repeats=1, warmup=warmup)
        if hasattr(self.runner, "measured"):  # the floor times its own forward passes (pro rata for topped-up batches)
            timing.wall_s[0], timing.cpu_s[0] = self.runner.measured(self.output)
        for name in ("wall_s", "cpu_s", "warmup_wall_s", "loadavg_1min"):
            getattr(self.timing, name).extend(getattr(timing, name))
        if hasattr(self.runner, "model_seconds"):  # untimed: read from the run's own record
            self.model_s.append(self.runner.model_seconds(self.output))
        scores = self.runner.scores(self.output)  # untimed
        if self.first_scores is None:
            self.first_scores = scores
        else:
            self.drift = max([self.drift] + [abs(v - self.first_scores.get(k, float("inf"))) for k, v in scores.items()])
        return {"status": "ok", "wall_s": timing.wall_s[0]}

    def finish(self) -> dict[str, Any]:
        from speed.measure import peak_gpu_mb, peak_rss_mb

        if self.skipped:
            return {"status": "skipped", "reason": self.skipped}
        if self.output is None:
            return {"status": "error", "reason": "finished before any timed run"}
        runner = self.runner
        scores = runner.scores(self.output)
        return {
            "status": "ok",
            "load_s": self.load_s,
            "timing": self.timing.to_dict(),
            "peak_rss_mb": peak_rss_mb(),
            "peak_gpu_mb": peak_gpu_mb(self.spec.device),
            "rss_after_load_mb": self.rss_after_load,
            "threads": self.threads,
            "tokenizers_parallelism": os.environ.get("TOKENIZERS_PARALLELISM"),  # what this process's tokenizer read
            "forward_tokens": getattr(self.prepared, "forward_tokens", None),
            "scored_tokens": runner.scored_tokens(self.output) if hasattr(runner, "scored_tokens") else None,
            "n_sentences": len(scores),
            "rounds": len(self.timing.wall_s),
            "max_abs_diff_between_runs": self.drift,
            "scores": scores,
            "extra": runner.extra(self.output) if hasattr(runner, "extra") else None,
            "model_s_runs": self.model_s or None,
        }


class InlineWorker:
    """A worker in this process."""

    def __init__(self, spec: CellSpec) -> None:
        self.spec = spec
        try:
            self.session: _Session | None = _Session(spec)
            self.state = self.session.ready()
        except Exception as exc:  # noqa: BLE001 - one implementation failing must not stop the benchmark
            self.session, self.state = None, {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}

    def wait_ready(self) -> dict[str, Any]:
        return self.state

    def run_once(self) -> dict[str, Any]:
        assert self.session is not None
        try:
            return self.session.run_once()
        except Exception as exc:  # noqa: BLE001
            self.state = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
            return self.state

    def finish(self) -> dict[str, Any]:
        if self.session is None or self.state.get("status") == "error":
            return self.state
        return self.session.finish()


class ProcessWorker:
    """A worker in a child process; a crash, bad reply or timeout becomes ``status: error``."""

    def __init__(self, spec: CellSpec, *, timeout_s: float | None = None) -> None:
        self.spec, self.timeout_s = spec, timeout_s
        env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # TOKENIZERS_PARALLELISM: as run.py set it
        self.proc = subprocess.Popen([sys.executable, "-m", "speed.cell", json.dumps(asdict(spec))],
                                     cwd=str(Path(__file__).resolve().parent.parent), env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_tail: list[str] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.state: dict[str, Any] = {"status": "starting"}

    def wait_ready(self) -> dict[str, Any]:
        """Block until the child has loaded the model and prepared its inputs (or failed)."""
        if self.state.get("status") == "starting":
            self.state = self._reply()
        return self.state

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_tail = (self.stderr_tail + [line.rstrip()])[-8:]

    def _reply(self, command: str | None = None) -> dict[str, Any]:
        if self.proc.poll() is not None and command is not None:
            return self._error(f"worker exited with {self.proc.returncode}")
        timer = threading.Timer(self.timeout_s, self.proc.kill) if self.timeout_s else None
        try:
            if timer:
                timer.start()
            assert self.proc.stdin is not None and self.proc.stdout is not None
            if command is not None:
                self.proc.stdin.write(command + "\n")
                self.proc.stdin.flush()
            for line in self.proc.stdout:
                if line.startswith(PREFIX):
                    return json.loads(line[len(PREFIX):])
        except (BrokenPipeError, OSError, ValueError) as exc:
            return self._error(f"{type(exc).__name__}: {exc}")
        finally:
            if timer:
                timer.cancel()
        self.proc.wait()
        reason = f"timed out after {self.timeout_s:.0f} s" if self.proc.returncode in (-9, 137) else \
            f"worker exited with {self.proc.returncode}"
        return self._error(reason)

    def _error(self, reason: str) -> dict[str, Any]:
        self.state = {"status": "error", "reason": reason + (": " + " | ".join(self.stderr_tail) if self.stderr_tail else "")}
        return self.state

    def run_once(self) -> dict[str, Any]:
        return self._reply("run")

    def finish(self) -> dict[str, Any]:
        if self.state.get("status") == "error":
            self.proc.kill()
            self.proc.wait()
            return self.state
        result = self._reply("finish")
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return result


def serve(spec: CellSpec, commands: TextIO, reply: Callable[[dict[str, Any]], None]) -> None:
    """The child's loop: announce readiness, then answer ``run`` / ``finish`` commands."""
    try:
        session = _Session(spec)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which records the failure
        reply({"status": "error", "reason": f"setup failed: {type(exc).__name__}: {exc}"})
        return
    reply(session.ready())
    for line in commands:
        command = line.strip()
        if command == "run":
            reply(session.run_once())
        elif command == "finish":
            reply(session.finish())
            return


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m speed.cell SPEC_JSON  (then 'run' / 'finish' lines on stdin)", file=sys.stderr)
        return 2
    spec = CellSpec(**json.loads(args[0]))
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr  # anything a library prints must not mix with the protocol

    def reply(message: dict[str, Any]) -> None:
        protocol.write(PREFIX + json.dumps(message, allow_nan=False) + "\n")
        protocol.flush()

    serve(spec, sys.stdin, reply)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
