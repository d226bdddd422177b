"""Executors without models: what the Ray driver asks of the cluster, result order, errors.

A fake ``ray`` module records the calls (a real one-node Ray instance is exercised in
``tests/test_study_run.py``, a real two-node cluster in ``tests/test_study_ray_cluster.py``); ``run_job`` is
replaced by a function that returns at once.
"""

from __future__ import annotations

import sys
import types

import pytest

from stereoset_eval.study import executors
from stereoset_eval.study.config import ModelSpec
from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.study.executors import JobResult, LocalExecutor, RayExecutor, ScoreSettings, make_executor
from stereoset_eval.study.node_worker import WeightsMismatchError, check_weights
from stereoset_eval.study.plan import Job
from stereoset_eval.study.progress import estimate_eta
from stereoset_eval.study.ray_cluster import JobsFailedError
from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError

JOBS = [Job(ModelSpec(f"m{i}", f"m{i}"), "masked", bench, "pll") for i in range(2) for bench in ("A", "B")]
ITEMS = {"A": ["a1", "a2"], "B": ["b1"], "unused": ["x"]}


def fake_run_job(job, items, settings, *, progress=False, load_from=None, shared=None):
    return JobResult(job, {f"{job.key}/{it}": 1.0 for it in items}, {"device": settings.device}, {"hits": 0,
                     "computed": len(items)}, 0.0)


class Ref:
    """An object reference: hashable by identity, like Ray's."""

    def __init__(self, value, error=None):
        self.value, self.error = value, error


class _TaskError(Exception):
    """Like ``ray.exceptions.RayTaskError``: the task's own exception is ``cause``."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


class FakeRay(types.ModuleType):
    """Enough of Ray for the driver: init/shutdown, resources, remote tasks and actors, put/wait/get/kill."""

    def __init__(self, resources, initialized=False):
        super().__init__("ray")
        self.resources, self.initialized = resources, initialized
        self.calls: dict[str, object] = {"put": [], "remote": []}
        self.__version__ = "0.test"
        self.exceptions = types.SimpleNamespace(RayTaskError=_TaskError)

    def is_initialized(self):
        return self.initialized

    def init(self, **kwargs):
        self.calls["init"] = kwargs
        self.initialized = True

    def shutdown(self):
        self.calls["shutdown"] = True

    def cluster_resources(self):
        return dict(self.resources)

    def put(self, value):
        self.calls["put"].append(value)
        return Ref(value)

    def remote(self, **options):
        self.calls["remote"].append(options)
        calls = self.calls

        class Remote:
            def __init__(self, target):
                self.target = target

            def options(self, **more):
                calls.setdefault("options", []).append(more)
                return self

            def remote(self, *args, **kwargs):
                args = [a.value if isinstance(a, Ref) else a for a in args]
                if isinstance(self.target, type):  # an actor: its methods return references
                    return _Actor(self.target(*args, **kwargs))
                try:
                    return Ref(self.target(*args, **kwargs))
                except Exception as exc:  # noqa: BLE001 - raised again by get, like Ray
                    return Ref(None, exc)

        return Remote

    def wait(self, refs, num_returns=1, timeout=None):
        return refs[-1:], refs[:-1]  # finish in reverse order: the driver must restore job order

    def get(self, ref, timeout=None):
        if ref.error is not None:
            raise _TaskError(ref.error)
        return ref.value

    def kill(self, actor):
        self.calls["kill"] = True


class _Actor:
    def __init__(self, obj):
        self.obj = obj

    def __getattr__(self, name):
        method = getattr(self.obj, name)
        return types.SimpleNamespace(remote=lambda *a, **k: Ref(method(*a, **k)))


@pytest.fixture
def fake_ray(monkeypatch):
    def install(resources, initialized=False):
        ray = FakeRay(resources, initialized)
        monkeypatch.setitem(sys.modules, "ray", ray)
        monkeypatch.setattr(executors, "run_job", fake_run_job)
        return ray
    return install


@pytest.fixture
def settings(tmp_path):
    return ScoreSettings(device="auto", cache_dir=str(tmp_path / "driver-cache"))


def _task_options(ray):
    (task,) = [o for o in ray.calls["remote"] if "max_retries" in o]
    return task


@pytest.mark.parametrize("resources, gpus", [({"CPU": 8.0}, 0), ({"CPU": 8.0, "GPU": 2.0}, 1)])
def test_ray_requests_a_gpu_per_task_only_when_the_cluster_has_gpus(fake_ray, settings, resources, gpus):
    ray = fake_ray(resources)
    seen = []
    results = RayExecutor(num_cpus=8).run(JOBS, ITEMS, settings, on_result=lambda r: seen.append(r))
    assert _task_options(ray) == {"num_cpus": 1, "num_gpus": gpus, "max_retries": 3,
                                  "retry_exceptions": [ConnectionError, TimeoutError]}
    assert [r.job for r in results] == JOBS
    # jobs of one (model, method) run one after another, in job order; the two models' chains interleave
    order = [JOBS.index(r.job) for r in seen]
    assert sorted(order) == [0, 1, 2, 3] and order.index(0) < order.index(1) and order.index(2) < order.index(3)
    assert ray.calls["put"] == [ITEMS["A"], ITEMS["B"]]  # each benchmark's items shipped once, unused ones not
    assert ray.calls["init"]["num_cpus"] == 8 and ray.calls.get("shutdown") and ray.calls.get("kill")
    assert ray.calls["options"] == [{"resources": {"node:__internal_head__": 0.001}}]  # the board: on the head


def test_ray_joins_a_cluster_by_address_and_forwards_offline_settings(fake_ray, settings, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("STEREOSET_EVAL_CACHE", "/driver/only")
    ray = fake_ray({"CPU": 2.0})
    ex = RayExecutor(address="ray://head:10001", num_cpus=64, max_retries=5)
    ex.run(JOBS[:1], ITEMS, settings)
    init = ray.calls["init"]
    assert init["address"] == "ray://head:10001" and "num_cpus" not in init
    assert init["runtime_env"]["env_vars"]["HF_HUB_OFFLINE"] == "1"
    assert "STEREOSET_EVAL_CACHE" not in init["runtime_env"]["env_vars"]  # the driver's cache is its own
    described = ex.describe()
    assert {k: described[k] for k in ("name", "address", "resources", "gpus_per_task", "cpus_per_task",
                                       "ray_version", "max_retries", "retried_jobs")} == {
        "name": "ray", "address": "ray://head:10001", "resources": {"CPU": 2.0}, "gpus_per_task": 0,
        "cpus_per_task": 1, "ray_version": "0.test", "max_retries": 5, "retried_jobs": []}
    assert described["attempts"] == {JOBS[0].key: 1}


def test_ray_already_running_is_reused_and_left_running(fake_ray, settings):
    ray = fake_ray({"CPU": 2.0}, initialized=True)
    RayExecutor().run(JOBS[:1], ITEMS, settings)
    assert "init" not in ray.calls and "shutdown" not in ray.calls


def test_ray_missing_is_a_clear_error(monkeypatch, settings):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(StereosetEvalError, match=r"pip install 'stereoset-eval\[ray\]'"):
        RayExecutor().run(JOBS, ITEMS, settings)


def test_a_failing_job_fails_the_study_after_the_others_finished(fake_ray, settings, monkeypatch):
    fake_ray({"CPU": 2.0})

    def run_job(job, items, settings_, **kwargs):
        if job is JOBS[2]:
            raise StereosetEvalError("model m1: cannot be loaded")
        return fake_run_job(job, items, settings_)

    monkeypatch.setattr(executors, "run_job", run_job)
    seen = []
    with pytest.raises(JobsFailedError) as err:
        RayExecutor().run(JOBS, ITEMS, settings, on_result=seen.append)
    assert sorted(JOBS.index(r.job) for r in seen) == [0, 1, 3]  # the failed job's chain went on
    message = str(err.value)
    assert message.startswith("1 of 4 job(s) failed") and "m1 (m1), method pll on A" in message
    assert "StereosetEvalError: model m1: cannot be loaded" in message and "\n" not in message


def test_progress_lines_name_the_node_and_end_with_everything_done(fake_ray, settings):
    fake_ray({"CPU": 2.0})
    seen = []
    RayExecutor(on_progress=seen.append).run(JOBS, ITEMS, settings)
    assert seen and len(seen[-1].done) == 4 and not seen[-1].queued and seen[-1].eta_s == 0.0
    assert seen[-1].line().startswith("jobs 4/4 done, 0 running, 0 queued")


def test_a_weights_mismatch_between_nodes_is_an_error():
    job = JOBS[0]
    check_weights(job, "a" * 64, "a" * 64, "node x")  # the same checkpoint: fine
    check_weights(job, None, "b" * 64, "node x")  # nothing to compare with yet: fine
    with pytest.raises(WeightsMismatchError, match=r"model m0 \(m0\): the weights on node x have sha256 bbbb"):
        check_weights(job, "a" * 64, "b" * 64, "node x")


def test_eta_from_the_jobs_done_so_far():
    assert estimate_eta(elapsed_s=10.0, n_done=0, n_left=4, parallel=2) is None
    assert estimate_eta(elapsed_s=10.0, n_done=5, n_left=0, parallel=2) == 0.0
    # 4 jobs done in 10 s two at a time: 5 s a job; 6 left two at a time: 15 s
    assert estimate_eta(elapsed_s=10.0, n_done=4, n_left=6, parallel=2) == pytest.approx(15.0)


def test_local_executor_runs_in_job_order(monkeypatch):
    monkeypatch.setattr(executors, "run_job", fake_run_job)
    seen = []
    results = LocalExecutor().run(JOBS, ITEMS, ScoreSettings(), on_result=seen.append)
    assert [r.job for r in results] == [r.job for r in seen] == JOBS
    assert results[0].scores == {"m0 | A | pll/a1": 1.0, "m0 | A | pll/a2": 1.0}


def test_make_executor():
    assert make_executor("local").name == "local" and make_executor("ray", address="auto").address == "auto"
    with pytest.raises(UnknownNameError, match="Did you mean 'ray'"):
        make_executor("rya")


def test_run_job_passes_every_scoring_setting_to_score_items(monkeypatch):
    import stereoset_eval.scoring.api

    seen = {}

    class Result:
        scores, provenance, cache_stats = {"s": 1.0}, {}, {"hits": 0, "computed": 1}

    def fake_score_items(items, **kwargs):
        seen.update(kwargs)
        return Result()

    monkeypatch.setattr(stereoset_eval.scoring.api, "score_items", fake_score_items)
    settings = ScoreSettings(device="cpu", dtype="fp32", batch_tokens=512, last_layer="all", cache_dir="/c",
                             use_cache=False)
    executors.run_job(JOBS[0], ["a1"], settings)
    assert seen["settings"] == RunSettings(device="cpu", dtype="fp32", batch_tokens=512, last_layer="all",
                                           allocator=settings.allocator)
    assert {k: seen[k] for k in ("cache_dir", "use_cache")} == {"cache_dir": "/c", "use_cache": False}


def test_ray_progress_is_printed_at_the_driver_unless_turned_off(fake_ray, settings, capsys):
    """--no-progress silences the Ray lines as it silences the local bars; with progress, one line per change."""
    from stereoset_eval.study.executors import make_executor

    fake_ray({"CPU": 2.0})
    make_executor("ray", progress=False).run(JOBS, ITEMS, settings)
    assert "jobs " not in capsys.readouterr().err
    make_executor("ray", progress=True).run(JOBS, ITEMS, settings)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("jobs ")]
    assert lines and lines[-1].startswith("jobs 4/4 done, 0 running, 0 queued")
    assert all(" queued" in line and " running" in line for line in lines)


class _FakeRay:
    """``ray.init`` failing ``failures`` times with ``error``, then connecting."""

    def __init__(self, failures: int, error: str) -> None:
        self.failures, self.error, self.inits, self.shutdowns = failures, error, 0, 0

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs):
        self.inits += 1
        if self.inits <= self.failures:
            raise ConnectionError(self.error)

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_ray_client_retries_a_client_server_that_failed_to_start(monkeypatch):
    monkeypatch.setattr(executors.time, "sleep", lambda s: None)
    flaky = _FakeRay(2, "Initialization failure from server: RuntimeError: Starting Ray client server failed.")
    assert executors.RayExecutor(address="ray://127.0.0.1:1")._start(flaky) is True
    assert (flaky.inits, flaky.shutdowns) == (3, 2)
    down = _FakeRay(5, "Initialization failure from server: RuntimeError: Starting Ray client server failed.")
    with pytest.raises(StereosetEvalError, match=r"cannot start Ray \(ray://127.0.0.1:1\) \(after 3 attempts\)"):
        executors.RayExecutor(address="ray://127.0.0.1:1")._start(down)
    refused = _FakeRay(5, "Connection refused")  # not the transient kind: reported at once
    with pytest.raises(StereosetEvalError, match=r"cannot start Ray \(ray://127.0.0.1:1\): Connection refused"):
        executors.RayExecutor(address="ray://127.0.0.1:1")._start(refused)
    assert refused.inits == 1
    local = _FakeRay(5, "Initialization failure from server")  # a local start is never retried
    with pytest.raises(StereosetEvalError):
        executors.RayExecutor()._start(local)
    assert local.inits == 1
