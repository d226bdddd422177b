"""A study's driver in a fresh process, for the Ray cluster tests: ``python tests/ray_driver.py SPEC.json``.

Each study of ``tests/test_study_ray_cluster.py`` runs here, not in the pytest process: Ray
2.60 keeps state of an earlier session in a process after ``ray.shutdown()``, and a driver that
joins a cluster after one sees every task fail with ``OwnerDiedError`` once a node is killed;
a fresh process has no earlier session, so the tests pass in any order, after any other Ray
test. The driver connects the way a user's does: :class:`RayExecutor` given the address (a GCS
``host:port`` or a Ray Client ``ray://host:port``).

SPEC (JSON): ``address``, ``config`` (the raw study tables), ``out`` (where the answer goes) and
optionally ``kill`` = ``{"node_id": …, "pid": …, "release": {"name": …, "namespace": …}}``:
SIGKILL that node's process tree as soon as a job is seen running on it, then kill the named
actor ``release`` (the test's placeholder that kept the other node busy, so that the first jobs
had to go to the doomed node). The answer (JSON): ``ok`` / ``error``, the jobs and their scores
(``repr`` of each float, so equality is bitwise), cache statistics, the executor's description,
the output paths, the progress reports, the jobs running on the node when it was killed, and
the node the driver ran on.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def main(spec_path: str) -> int:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    from ray_nodes import kill_tree  # tests/ray_nodes.py, beside this file

    import ray

    from stereoset_eval.study import parse_config, run_study
    from stereoset_eval.study.executors import RayExecutor

    answer: dict[str, Any] = {"ok": False, "error": None, "killed": [], "progress": [], "driver_node": None}
    kill = spec.get("kill")

    def on_progress(progress: Any) -> None:
        if answer["driver_node"] is None:
            try:
                answer["driver_node"] = ray.get_runtime_context().get_node_id()
            except Exception as exc:  # noqa: BLE001 - a Ray Client driver may not know its node
                answer["driver_node"] = f"unknown ({type(exc).__name__})"
        answer["progress"].append({"line": progress.line(), "running": len(progress.running),
                                   "done": len(progress.done), "queued": len(progress.queued),
                                   "eta_s": progress.eta_s})
        if kill and not answer["killed"]:
            there = [key for key, nid in progress.running_nodes.items() if nid == kill["node_id"]]
            if there:
                answer["killed"] = there
                kill_tree(kill["pid"])
                if kill.get("release"):
                    ray.kill(ray.get_actor(kill["release"]["name"], namespace=kill["release"]["namespace"]))

    executor = RayExecutor(address=spec["address"], on_progress=on_progress)
    try:
        run = run_study(parse_config(spec["config"], source=spec.get("source", "test")), executor=executor)
    except Exception as exc:  # noqa: BLE001 - reported to the test, which decides
        answer["error"] = f"{type(exc).__name__}: {exc}"
    else:
        answer.update(ok=True, jobs=[r.job.key for r in run.results],
                      scores={r.job.key: {k: repr(v) for k, v in r.scores.items()} for r in run.results},
                      loaded_from={r.job.key: r.provenance.get("run", {}).get("model_loaded_from")
                                   for r in run.results},
                      threads={r.job.key: r.provenance.get("run", {}).get("torch_threads") for r in run.results},
                      cache_stats=dict(run.cache_stats),
                      job_cache_stats={r.job.key: dict(r.cache_stats) for r in run.results},
                      paths={k: str(v) for k, v in run.paths.items()})
    answer["executor"] = executor.describe()
    Path(spec["out"]).write_text(json.dumps(answer), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
