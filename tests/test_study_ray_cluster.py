"""A study on a real two-node Ray cluster on this machine (``ray start --head`` + ``ray start --address``).

Each node has its own temporary folder, one CPU, its own custom resource, its own node-local
score cache, its own node name (``STEREOSET_EVAL_NODE_NAME``) and its own copy of the fixture
models (``[models.paths]``: the study declares each node's folder). Checked: the numbers are
the local executor's (bit for bit where both ran one torch thread count, else within the float32
tolerance of docs/scoring-settings.md; the decisions, hence every table, identical); each job read the model from its node's folder; the
driver's cache holds every score (the same rows as the local run's cache, so a node's folder
changes no cache key); a rerun with the workers' caches deleted computes nothing; a node whose
copy is another checkpoint is refused (model and node named); when the second node is killed
while it runs a job, Ray retries that job elsewhere, the study still completes with identical
numbers, and the report names the retried job; a driver connected through Ray Client
(``ray://``) gives the local executor's numbers.

Every study's driver is a fresh process (``tests/ray_driver.py``), and nodes and drivers start
with this process's environment minus what an earlier ``ray.init`` here put in it
(:func:`ray_nodes.clean_environ`), so these tests pass in any order and after any other Ray test
of the pytest process (see that file for why); this process joins the cluster only to list its nodes. The cluster is torn down (every process of every node
killed) whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray_cluster tests need Ray: pip install 'stereoset-eval[ray]'")

from stereoset_eval.scoring.cache import ScoreCache  # noqa: E402
from stereoset_eval.study import parse_config, run_study  # noqa: E402
from stereoset_eval.study.executors import FORWARDED_ENV, LocalExecutor  # noqa: E402
from ray_nodes import LocalCluster, clean_environ  # noqa: E402  (tests/ray_nodes.py)
from score_tolerance import job_threads, rows_agree, score_files_agree, scores_agree  # noqa: E402  (tests/score_tolerance.py)

# `make test` (pytest-xdist) runs this module and test_study_run.py on one worker: tests/conftest.py XDIST_UNITS
pytestmark = [pytest.mark.slow, pytest.mark.ray_cluster, pytest.mark.filterwarnings("ignore::UserWarning")]

MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2")
NODE_NAMES = ("head", "n2")
LIMIT = 8
WATCHDOG_S = 900  # the whole module takes ~3 min on a loaded 2-core machine
DRIVER = Path(__file__).with_name("ray_driver.py")
DRIVER_TIMEOUT_S = 420


def raw_config(models_dir: Path, data_dir: Path, tmp: Path, *, name: str, cache: str, models=MODELS,
               node_models: Path | None = None) -> dict:
    """The study's tables; ``node_models``: each node reads ``node_models/<node name>/<model>``."""
    def model(m: str) -> dict:
        spec: dict = {"id": str(models_dir / m)}
        if node_models is not None:
            spec["paths"] = {n: str(node_models / n / m) for n in NODE_NAMES}
        return spec

    return {
        "study": {"title": "two-node study", "output": str(tmp / name), "cache_dir": str(tmp / cache),
                  "limit": LIMIT},
        "data": {"dir": str(data_dir), "download": False},
        "models": [model(m) for m in models],
        "benchmarks": [  # BMNE-StereoSet shares sentences with StereoSet: computed once, in the first job
            {"name": "StereoSet", "source": "stereoset"},
            {"name": "CrowS-Pairs", "source": "crows-pairs"},
            {"name": "BMNE-StereoSet", "source": "curated", "from": "StereoSet"},
        ],
        "methods": {"masked": ["pll"], "causal": ["causal-ll"], "benchmark_methods": True},
        "analysis": {"bootstrap": 50, "compare": [["CrowS-Pairs", "StereoSet"]]},
    }


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-cluster-study")


@pytest.fixture(scope="module")
def local_run(models_dir, data_dir, tmp):
    return run_study(parse_config(raw_config(models_dir, data_dir, tmp, name="local", cache="local-cache"),
                                  source="test"), executor=LocalExecutor())


def _copy_models(models_dir: Path, dst: Path, *, perturb: tuple[str, ...] = ()) -> Path:
    """Writable copies of the fixture models; a model in ``perturb`` gets other weights (same shapes)."""
    for m in MODELS:
        shutil.copytree(models_dir / m, dst / m)
        for p in [dst / m, *(dst / m).iterdir()]:
            p.chmod(0o755 if p.is_dir() else 0o644)  # the fixtures are read-only
        if m in perturb:
            from safetensors.torch import load_file, save_file

            tensors = load_file(dst / m / "model.safetensors")
            first = sorted(tensors)[0]
            tensors[first] = tensors[first] + 0.5
            save_file(tensors, dst / m / "model.safetensors", metadata={"format": "pt"})
    return dst


@pytest.fixture(scope="module")
def cluster(local_run, models_dir):
    """Head (resource ``head``) + second node (``n2``), one CPU each, each with its own model copies
    under ``root/models/<node name>``; this process joins to list nodes (drivers: tests/ray_driver.py)."""
    root = Path(tempfile.mkdtemp(prefix="rc", dir="/tmp"))  # short: Ray's socket paths are length-limited
    for name in NODE_NAMES:
        _copy_models(models_dir, root / "models" / name)
    nodes = LocalCluster(root)
    if ray.is_initialized():
        ray.shutdown()
    watchdog = threading.Timer(WATCHDOG_S, nodes.stop)  # a hung study fails (its nodes gone) instead of hanging CI
    watchdog.daemon = True
    watchdog.start()
    try:
        nodes.add_node("head", head=True, resources={"head": 1})
        nodes.wait_for_head()
        ray.init(address=nodes.address, include_dashboard=False, log_to_driver=False)
        nodes.wait_for_nodes(1)
        nodes.add_node("n2", resources={"n2": 1})
        nodes.wait_for_nodes(2)
        yield nodes
    finally:
        watchdog.cancel()
        if ray.is_initialized():
            ray.shutdown()
        nodes.stop()
        shutil.rmtree(root, ignore_errors=True)  # the folder this fixture created


def _alive_with(resource: str) -> list[str]:
    return [n["NodeID"] for n in ray.nodes() if n.get("Alive") and resource in n.get("Resources", {})]


def node_id(resource: str) -> str:
    (nid,) = _alive_with(resource)
    return nid


def drive(cluster, tmp: Path, raw: dict, *, address: str | None = None, kill: dict | None = None) -> dict:
    """Run the study ``raw`` from a fresh driver process (tests/ray_driver.py); its answer."""
    name = raw["study"]["output"].rsplit("/", 1)[-1]
    spec, out = tmp / f"{name}.spec.json", tmp / f"{name}.answer.json"
    spec.write_text(json.dumps({"address": address or cluster.address, "config": raw, "out": str(out),
                                "kill": kill}), encoding="utf-8")
    env = {k: v for k, v in clean_environ().items() if k != "STEREOSET_EVAL_CACHE"}
    env.update(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    assert all(k in env for k in FORWARDED_ENV if k in os.environ)
    done = subprocess.run([sys.executable, str(DRIVER), str(spec)], env=env, capture_output=True, text=True,
                          timeout=DRIVER_TIMEOUT_S, cwd=str(tmp))
    assert done.returncode == 0 and out.exists(), done.stderr[-3000:]
    return json.loads(out.read_text(encoding="utf-8"))


def _server_logs(cluster) -> str:
    """The tails of the head's Ray Client server logs (why a ``ray://`` connection failed)."""
    logs = sorted(cluster.root.glob("ray-head/**/logs/ray_client_server*"))
    return "\n".join(f"{p.name}: {p.read_text(errors='replace')[-1500:]}" for p in logs)


def _one_thread_count(answer: dict, local_run) -> bool:
    """Every job of both runs scored on the same number of torch threads (then: the same bits)."""
    return len(set(answer["threads"].values()) | {job_threads(r.provenance) for r in local_run.results}) == 1


def _same_numbers(answer: dict, local_run) -> None:
    """The local run's numbers: bit for bit where every job ran on the same torch thread count (the nodes
    run one unless OMP_NUM_THREADS says otherwise), else within the float32 tolerance; identical decisions."""
    assert answer["ok"], answer["error"]
    assert answer["jobs"] == [r.job.key for r in local_run.results]
    exact = _one_thread_count(answer, local_run)
    for r in local_run.results:
        scores_agree({k: float(v) for k, v in answer["scores"][r.job.key].items()}, r.scores, exact=exact,
                     what=r.job.key)
    score_files_agree(Path(answer["paths"]["scores"]), local_run.paths["scores"], exact=exact)
    assert Path(answer["paths"]["study_scores"]).read_bytes() == local_run.paths["study_scores"].read_bytes()


def _clear_node_caches(cluster) -> None:
    for node in cluster.nodes:
        shutil.rmtree(node.cache_dir, ignore_errors=True)  # folders the cluster fixture created
        node.cache_dir.mkdir()


def _rows(cache_dir: Path) -> dict[str, object]:
    with ScoreCache(cache_dir) as cache:
        return {key: value for key, _model, _method, value in cache.rows()}


def _fresh_second_node(cluster) -> None:
    """Replace the second node by a new one (cold workers: a job on it runs for seconds, long
    enough to be seen running and killed); its node name and model folder stay ``n2``'s."""
    old = _alive_with("n2")  # none when the node was killed (and declared dead) already
    cluster.nodes[-1].kill()
    cluster.add_node(f"n2-{len(cluster.nodes)}", resources={"n2": 1}, node_name="n2")
    deadline = time.monotonic() + 120
    while True:  # until the GCS has marked the old node dead and registered the new one
        alive = _alive_with("n2")
        if len(alive) == 1 and alive[0] not in old:
            return
        assert time.monotonic() < deadline, f"the second node was not replaced: alive {alive}, old {old}"
        time.sleep(0.5)


def _placeholder_class() -> type:
    """An actor class that holds the head's one CPU, so the study's first jobs must run on the second
    node (defined in a function: cloudpickle ships it by value; workers cannot import this module)."""

    class Placeholder:
        def ready(self) -> bool:
            return True

    return Placeholder


PLACEHOLDER = {"name": "head-placeholder", "namespace": "stereoset-eval-tests"}


def test_second_node_killed_mid_job_is_survived_and_reported(cluster, local_run, models_dir, data_dir, tmp):
    """The head is kept busy until the second node runs a job (else a loaded machine may run every
    job on the head's one warm worker before the second node's first worker is up); the driver
    kills the second node, then frees the head, where the lost job is retried."""
    _fresh_second_node(cluster)
    second = cluster.nodes[-1]
    victim = node_id("n2")
    # detached: owned by the cluster, not by this process (which may carry an earlier Ray session)
    placeholder = ray.remote(num_cpus=1, resources={"head": 1})(_placeholder_class()).options(
        name=PLACEHOLDER["name"], namespace=PLACEHOLDER["namespace"], lifetime="detached").remote()
    ray.get(placeholder.ready.remote(), timeout=120)
    raw = raw_config(models_dir, data_dir, tmp, name="fault", cache="fault-cache",
                     node_models=cluster.root / "models")
    try:
        answer = drive(cluster, tmp, raw, kill={"node_id": victim, "pid": second.proc.pid, "release": PLACEHOLDER})
    finally:  # the other tests get a fresh second node and a free head
        try:
            ray.kill(placeholder)
        except Exception:  # noqa: BLE001 - killed by the driver already
            pass
        _fresh_second_node(cluster)
    killed = answer["killed"]
    assert killed, "no job ran on the second node"
    assert answer["driver_node"] == node_id("head"), "the driver is not on the head node"
    _same_numbers(answer, local_run)
    described = answer["executor"]
    assert set(killed) <= set(described["retried_jobs"])
    for key in killed:
        nodes = described["job_nodes"][key]
        assert nodes[0] == victim and nodes[-1] != victim and described["attempts"][key] >= 2
    rows_agree(_rows(tmp / "fault-cache"), _rows(tmp / "local-cache"), exact=_one_thread_count(answer, local_run))
    prov = json.loads(Path(answer["paths"]["json"]).read_text(encoding="utf-8"))["provenance"]
    assert set(killed) <= set(prov["extra"]["executor"]["retried_jobs"])


def test_two_nodes_give_byte_identical_results_and_the_driver_caches_everything(cluster, local_run, models_dir,
                                                                                 data_dir, tmp):
    """Each node reads the model from its own folder (``[models.paths]``) under the model's identity."""
    head, second = node_id("head"), node_id("n2")
    _clear_node_caches(cluster)  # the fault test's scores stay out: everything is computed afresh
    raw = raw_config(models_dir, data_dir, tmp, name="cluster", cache="driver-cache",
                     node_models=cluster.root / "models")
    started = time.monotonic()
    answer = drive(cluster, tmp, raw)
    wall = time.monotonic() - started
    _same_numbers(answer, local_run)
    assert answer["cache_stats"] == local_run.cache_stats  # computed exactly what the local run computed, no more
    described = answer["executor"]
    used = {nid for nodes in described["job_nodes"].values() for nid in nodes}
    assert used == {head, second}, (used, head, second)
    assert described["retried_jobs"] == []
    # every job read its node's own copy: the folder declared for the node it ran on
    names = {head: "head", second: "n2"}
    for key, loaded in answer["loaded_from"].items():
        (nid,) = described["job_nodes"][key]
        model = key.split(" | ")[0]
        assert loaded == str(cluster.root / "models" / names[nid] / model), (key, loaded)
    # the driver's cache holds every score: the very rows (keys and values) of the local run's cache
    rows_agree(_rows(tmp / "driver-cache"), _rows(tmp / "local-cache"), exact=_one_thread_count(answer, local_run))
    assert all(_rows(n.cache_dir) for n in (cluster.nodes[0], cluster.nodes[-1]))  # each node kept its own copy
    progress = answer["progress"]
    assert any(p["running"] for p in progress) and all("on " in p["line"] for p in progress if p["running"])
    last = progress[-1]
    assert last["done"] == len(answer["jobs"]) and not last["queued"] and not last["running"] and last["eta_s"] == 0.0
    print(f"two-node study: {len(answer['jobs'])} jobs in {wall:.1f} s (driver process included)")


def test_rerun_with_the_workers_caches_deleted_computes_nothing(cluster, local_run, models_dir, data_dir, tmp):
    if not (tmp / "driver-cache").exists():
        pytest.skip("needs the two-node run's driver cache (run the whole module)")
    _clear_node_caches(cluster)
    raw = raw_config(models_dir, data_dir, tmp, name="rerun", cache="driver-cache",
                     node_models=cluster.root / "models")
    answer = drive(cluster, tmp, raw)
    _same_numbers(answer, local_run)
    assert answer["cache_stats"] == {"hits": sum(len(s) for s in answer["scores"].values()), "computed": 0}
    assert all(s["computed"] == 0 for s in answer["job_cache_stats"].values())


def test_another_checkpoint_in_a_node_s_folder_fails_the_study_naming_model_and_node(cluster, models_dir,
                                                                                       data_dir, tmp):
    """Both nodes' folders of tiny-bert hold other weights than the driver's copy (its id)."""
    bad = cluster.root / "models-bad"
    for name in NODE_NAMES:
        _copy_models(models_dir, bad / name, perturb=("tiny-bert",))
    raw = raw_config(models_dir, data_dir, tmp, name="mismatch", cache="mismatch-cache", models=("tiny-bert",),
                     node_models=bad)
    answer = drive(cluster, tmp, raw)
    assert not answer["ok"]
    error = answer["error"]
    assert error.startswith("JobsFailedError: ") and "\n" not in error
    assert "WeightsMismatchError: model tiny-bert (" in error and "driver's record" in error
    assert "on node head/" in error or "on node n2/" in error
    assert f"{bad}/" in error  # the node's folder is named
    assert answer["executor"]["retried_jobs"] == []  # deterministic: never retried


def test_a_ray_client_driver_gives_the_local_numbers(cluster, models_dir, data_dir, tmp):
    """``ray://`` (the head's Ray Client server) instead of the GCS address; one model, fresh caches."""
    pytest.importorskip("ray.util.client", reason="this Ray has no Ray Client (pip install 'ray[client]')")
    pytest.importorskip("grpc", reason="Ray Client needs grpcio (pip install 'ray[client]')")
    local = run_study(parse_config(raw_config(models_dir, data_dir, tmp, name="client-local", cache="client-local-cache",
                                              models=("tiny-gpt2",)), source="test"), executor=LocalExecutor())
    raw = raw_config(models_dir, data_dir, tmp, name="client", cache="client-cache", models=("tiny-gpt2",),
                     node_models=cluster.root / "models")
    answer = drive(cluster, tmp, raw, address=cluster.client_address)
    assert answer["ok"], f"{answer['error']}\n{_server_logs(cluster)}"
    _same_numbers(answer, local)
    assert answer["executor"]["address"] == cluster.client_address
    rows_agree(_rows(tmp / "client-cache"), _rows(tmp / "client-local-cache"), exact=_one_thread_count(answer, local))
