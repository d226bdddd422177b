"""One study run of the soak test (tests/test_soak_study.py), in its own process, killed on purpose.

``python tests/soak_study.py SPEC`` runs one; ``python tests/soak_study.py --serve`` imports
everything once and then forks one run per SPEC path read from stdin, answering each with its
exit status on stdout (a forked run is killed as a process of its own would be: the imports are
just not paid again). SPEC (JSON): ``config`` (the raw study tables), ``executor``
(``local`` or ``ray``), ``kill`` (None, or ``{"place", "signal", "at"}``) and ``counts`` (a file
to write how often each place was reached: the calibration run draws the kill points from it).

Places, each a point the run passes many times; the run sends itself ``signal`` the ``at``-th time:

* ``scoring`` — a forward call of any torch module (inside the scoring of a job);
* ``cache`` — inside the score cache's write transaction, after the rows are inserted and before
  the commit (:meth:`ScoreCache.put_many`);
* ``report`` — a rename of a file of the new output set into its temporary folder, or the swap of
  that folder into place (the report write);
* ``ray-worker`` — (``executor = "ray"``) a thread of this driver waits ``at`` milliseconds and sends
  ``signal`` to a Ray worker process that is running a job (Ray retries the job elsewhere).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

COUNTS: dict[str, int] = {"scoring": 0, "cache": 0, "report": 0}


def _maybe_kill(place: str, kill: dict | None) -> None:
    COUNTS[place] += 1
    if kill and kill["place"] == place and COUNTS[place] == kill["at"]:
        os.kill(os.getpid(), getattr(signal, kill["signal"]))
        time.sleep(5)  # SIGTERM / SIGKILL end the process here; SIGINT raises KeyboardInterrupt here


def _instrument(out_name: str, kill: dict | None) -> None:
    import torch

    from stereoset_eval.scoring.cache import ScoreCache

    module_call = torch.nn.Module.__call__

    def counted_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        _maybe_kill("scoring", kill)
        return module_call(self, *args, **kwargs)

    torch.nn.Module.__call__ = counted_call  # type: ignore[method-assign]

    def put_many(self: Any, entries: Any, *, model: str, method: str) -> None:
        now = time.time()
        rows = [(k, model, method, json.dumps(v, ensure_ascii=False), now) for k, v in entries.items()]
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", rows)
            _maybe_kill("cache", kill)  # rows written, not yet committed

    ScoreCache.put_many = put_many  # type: ignore[method-assign]
    marker = f"/.{out_name}."

    def watched(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
            if marker in str(dst) or marker in str(src):
                _maybe_kill("report", kill)
            return original(src, dst, *args, **kwargs)
        return call

    os.replace = watched(os.replace)  # type: ignore[assignment]
    os.rename = watched(os.rename)  # type: ignore[assignment]


def _kill_a_ray_worker(delay_ms: int, sig: str, killed: list[int]) -> None:
    """After ``delay_ms``, ``sig`` to one Ray worker process that runs a job (its name is ``ray::<task>``)."""
    import psutil

    time.sleep(delay_ms / 1000)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not killed:
        for proc in psutil.process_iter(["name", "cmdline"]):
            title = " ".join(proc.info.get("cmdline") or []) or proc.info.get("name") or ""
            if title.startswith("ray::") and "IDLE" not in title and "score" in title:
                try:
                    proc.send_signal(getattr(signal, sig))
                    killed.append(proc.pid)
                except psutil.Error:
                    continue
                return
        time.sleep(0.05)


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    from stereoset_eval.study import parse_config, run_study
    from stereoset_eval.study.executors import LocalExecutor, RayExecutor

    config = parse_config(spec["config"], source="soak")
    kill = spec.get("kill")
    _instrument(Path(spec["config"]["study"]["output"]).name, kill if kill and kill["place"] != "ray-worker" else None)
    killed: list[int] = []
    executor: Any = LocalExecutor()
    if spec.get("executor") == "ray":
        executor = RayExecutor(num_cpus=2)
        if kill and kill["place"] == "ray-worker":
            threading.Thread(target=_kill_a_ray_worker, args=(kill["at"], kill["signal"], killed), daemon=True).start()
    try:
        run_study(config, executor=executor)
    finally:
        if spec.get("counts"):
            Path(spec["counts"]).write_text(json.dumps({**COUNTS, "ray_workers_killed": len(killed)}), encoding="utf-8")
    return 0


def _status(pid: int) -> int:
    """A forked run's exit status as ``subprocess`` reports one (minus the signal that ended it)."""
    _, code = os.waitpid(pid, 0)
    return -os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.WEXITSTATUS(code)


def serve() -> int:
    """Import once, then one forked run per SPEC path on stdin; ``<status>`` per line on stdout."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401  (the report's plots)
    import torch  # noqa: F401
    import transformers  # noqa: F401

    import stereoset_eval.study.run  # noqa: F401
    import stereoset_eval.study.executors  # noqa: F401

    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            os.dup2(2, 1)  # the run's own output goes to the log, not into the answers
            code = 1
            try:
                code = main(line.strip())
            except BaseException:  # noqa: BLE001 - SIGINT's KeyboardInterrupt or a failure: a non-zero status
                import traceback

                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(_status(pid), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(serve() if sys.argv[1] == "--serve" else main(sys.argv[1]))
