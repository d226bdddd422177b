"""A study on a real two-node Ray cluster on this machine (``ray start --head`` + ``ray start --address``).

Each node has its own temporary folder, one CPU, its own custom resource and its own node-local
score cache; the driver (this process) owns the study's cache. Checked: the numbers are
byte-identical to the local executor's; the driver's cache holds every score (the same rows as
the local run's cache); a rerun with the workers' caches deleted computes nothing; and when the
second node is killed while it runs a job, Ray retries that job elsewhere, the study still
completes with identical numbers, and the report names the retried job.

The cluster is torn down (every process of both nodes killed) whatever happens.

Known: this process must not have run another Ray session before the module (``ray.shutdown()``
then joining this cluster): Ray 2.60 then reports the driver dead (``OwnerDiedError``) to every
task once the second node is killed. In the default order (file names) no earlier test starts Ray.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray_cluster tests need Ray: pip install 'stereoset-eval[ray]'")

from stereoset_eval.scoring.cache import ScoreCache  # noqa: E402
from stereoset_eval.study import parse_config, run_study  # noqa: E402
from stereoset_eval.study.executors import FORWARDED_ENV, LocalExecutor, RayExecutor  # noqa: E402
from ray_nodes import LocalCluster  # noqa: E402  (tests/ray_nodes.py)

pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster, pytest.mark.filterwarnings("ignore::UserWarning")]

MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2")
LIMIT = 8
WATCHDOG_S = 600  # the whole module takes ~1.5 min on a loaded 2-core machine


def study_config(models_dir: Path, data_dir: Path, tmp: Path, *, name: str, cache: str):
    return parse_config({
        "study": {"title": "two-node study", "output": str(tmp / name), "cache_dir": str(tmp / cache),
                  "limit": LIMIT},
        "data": {"dir": str(data_dir), "download": False},
        "models": [{"id": str(models_dir / m)} for m in MODELS],
        "benchmarks": [  # BMNE-StereoSet shares sentences with StereoSet: computed once, in the first job
            {"name": "StereoSet", "source": "stereoset"},
            {"name": "CrowS-Pairs", "source": "crows-pairs"},
            {"name": "BMNE-StereoSet", "source": "curated", "from": "StereoSet"},
        ],
        "methods": {"masked": ["pll"], "causal": ["causal-ll"], "benchmark_methods": True},
        "analysis": {"bootstrap": 50, "compare": [["CrowS-Pairs", "StereoSet"]]},
    }, source="test")


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-cluster-study")


@pytest.fixture(scope="module")
def local_run(models_dir, data_dir, tmp):
    return run_study(study_config(models_dir, data_dir, tmp, name="local", cache="local-cache"),
                     executor=LocalExecutor())


@pytest.fixture(scope="module")
def cluster(local_run):
    """Head (resource ``head``) + second node (``n2``), one CPU each, this process as the driver."""
    import os

    if getattr(ray._private.worker.global_worker, "listener_thread", None) is not None:  # see the module docstring
        pytest.fail("this process ran another Ray session before: run tests/test_study_ray_cluster.py before "
                    "other Ray tests (the default order) or on its own")
    root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths are length-limited
    nodes = LocalCluster(root)
    if ray.is_initialized():
        ray.shutdown()
    watchdog = threading.Timer(WATCHDOG_S, nodes.stop)  # a hung study fails (its nodes gone) instead of hanging CI
    watchdog.daemon = True
    watchdog.start()
    try:
        nodes.add_node("head", head=True, resources={"head": 1})
        nodes.wait_for_head()
        env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
        # the driver joins before the second node exists, so it attaches to the head's raylet (its
        # objects must outlive the node the fault test kills; with two raylets on one host Ray
        # would pick either if the head's had not registered yet)
        ray.init(address=nodes.address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": env} if env else None)
        nodes.wait_for_nodes(1)
        assert ray.get_runtime_context().get_node_id() == node_id("head"), "the driver is not on the head node"
        nodes.add_node("n2", resources={"n2": 1})
        nodes.wait_for_nodes(2)
        yield nodes
    finally:
        watchdog.cancel()
        if ray.is_initialized():
            ray.shutdown()
        nodes.stop()
        shutil.rmtree(root, ignore_errors=True)  # the folder this fixture created


def node_id(resource: str) -> str:
    (nid,) = [n["NodeID"] for n in ray.nodes() if n.get("Alive") and resource in n.get("Resources", {})]
    return nid


def _executor(cluster, **kwargs) -> RayExecutor:
    return RayExecutor(address=cluster.address, **kwargs)


def _same_numbers(run, local_run) -> None:
    assert [r.job for r in run.results] == [r.job for r in local_run.results]
    for ours, theirs in zip(run.results, local_run.results):
        assert {k: repr(v) for k, v in ours.scores.items()} == {k: repr(v) for k, v in theirs.scores.items()}, \
            ours.job.key
    assert run.paths["scores"].read_bytes() == local_run.paths["scores"].read_bytes()
    assert run.paths["study_scores"].read_bytes() == local_run.paths["study_scores"].read_bytes()


def _clear_node_caches(cluster) -> None:
    for node in cluster.nodes:
        shutil.rmtree(node.cache_dir, ignore_errors=True)  # folders the cluster fixture created
        node.cache_dir.mkdir()


def _rows(cache_dir: Path) -> dict[str, object]:
    with ScoreCache(cache_dir) as cache:
        return {key: value for key, _model, _method, value in cache.rows()}


def test_second_node_killed_mid_job_is_survived_and_reported(cluster, local_run, models_dir, data_dir, tmp):
    """Runs first, while the second node's workers are cold (importing torch takes seconds)."""
    victim = node_id("n2")
    killed: list[str] = []

    def on_progress(progress):
        running_there = [key for key, nid in progress.running_nodes.items() if nid == victim]
        if running_there and not killed:
            killed.extend(running_there)
            cluster.nodes[1].kill()

    config = study_config(models_dir, data_dir, tmp, name="fault", cache="fault-cache")
    executor = _executor(cluster, on_progress=on_progress)
    try:
        run = run_study(config, executor=executor)
    finally:  # the other tests get a fresh second node
        cluster.nodes[1].kill()
        cluster.add_node("n2-again", resources={"n2": 1})
        cluster.wait_for_nodes(2)
    assert killed, "no job ran on the second node"
    _same_numbers(run, local_run)
    described = executor.describe()
    assert set(killed) <= set(described["retried_jobs"])
    for key in killed:
        nodes = described["job_nodes"][key]
        assert nodes[0] == victim and nodes[-1] != victim and described["attempts"][key] >= 2
    assert _rows(tmp / "fault-cache") == _rows(tmp / "local-cache")
    import json

    prov = json.loads(run.paths["json"].read_text(encoding="utf-8"))["provenance"]
    assert set(killed) <= set(prov["extra"]["executor"]["retried_jobs"])


def test_two_nodes_give_byte_identical_results_and_the_driver_caches_everything(cluster, local_run, models_dir,
                                                                                 data_dir, tmp):
    head, second = node_id("head"), node_id("n2")
    _clear_node_caches(cluster)  # the fault test's scores stay out: everything is computed afresh
    seen = []
    config = study_config(models_dir, data_dir, tmp, name="cluster", cache="driver-cache")
    executor = _executor(cluster, on_progress=seen.append)
    started = time.monotonic()
    run = run_study(config, executor=executor)
    wall = time.monotonic() - started
    _same_numbers(run, local_run)
    assert run.cache_stats == local_run.cache_stats  # computed exactly what the local run computed, no more
    described = executor.describe()
    used = {nid for nodes in described["job_nodes"].values() for nid in nodes}
    assert used == {head, second}, (used, head, second)
    assert described["retried_jobs"] == []
    # the driver's cache holds every score: the very rows (keys and values) of the local run's cache
    assert _rows(tmp / "driver-cache") == _rows(tmp / "local-cache")
    assert all(_rows(n.cache_dir) for n in (cluster.nodes[0], cluster.nodes[-1]))  # each node kept its own copy
    assert any(p.running for p in seen) and all("on " in p.line() for p in seen if p.running)
    last = seen[-1]
    assert len(last.done) == len(run.jobs) and not last.queued and not last.running and last.eta_s == 0.0
    print(f"two-node study: {len(run.jobs)} jobs in {wall:.1f} s")


def test_rerun_with_the_workers_caches_deleted_computes_nothing(cluster, local_run, models_dir, data_dir, tmp):
    if not (tmp / "driver-cache").exists():
        pytest.skip("needs the two-node run's driver cache (run the whole module)")
    _clear_node_caches(cluster)
    config = study_config(models_dir, data_dir, tmp, name="rerun", cache="driver-cache")
    run = run_study(config, executor=_executor(cluster))
    assert run.cache_stats == {"hits": sum(len(r.scores) for r in run.results), "computed": 0}
    assert all(r.cache_stats["computed"] == 0 for r in run.results)
    _same_numbers(run, local_run)
