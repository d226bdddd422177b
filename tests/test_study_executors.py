"""Executors without models: what the Ray driver asks of the cluster, result order, errors.

A fake ``ray`` module records the calls (the real local Ray instance is exercised in
``tests/test_study_run.py``); ``run_job`` is replaced by a function that returns at once.
"""

from __future__ import annotations

import sys
import types

import pytest

from stereoset_eval.study import executors
from stereoset_eval.study.config import ModelSpec
from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.study.executors import JobResult, LocalExecutor, RayExecutor, ScoreSettings, make_executor
from stereoset_eval.study.plan import Job
from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError

JOBS = [Job(ModelSpec(f"m{i}", f"m{i}"), "masked", bench, "pll") for i in range(2) for bench in ("A", "B")]
ITEMS = {"A": ["a1", "a2"], "B": ["b1"], "unused": ["x"]}


def fake_run_job(job, items, settings, *, progress=False):
    return JobResult(job, {f"{job.key}/{it}": 1.0 for it in items}, {"device": settings.device}, {"hits": 0,
                     "computed": len(items)}, 0.0)


class Ref:
    """An object reference: hashable by identity, like Ray's."""

    def __init__(self, value):
        self.value = value


class FakeRay(types.ModuleType):
    """Enough of Ray for the driver: init/shutdown, resources, remote tasks, put/wait/get."""

    def __init__(self, resources, initialized=False):
        super().__init__("ray")
        self.resources, self.initialized = resources, initialized
        self.calls: dict[str, object] = {"put": []}
        self.__version__ = "0.test"
        self.exceptions = types.SimpleNamespace(RayTaskError=RuntimeError)

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
        self.calls["remote"] = options
        class Task:
            def __init__(self, fn):
                self.fn = fn

            def remote(self, job, items_ref, settings):
                return Ref(self.fn(job, items_ref.value, settings))

        return Task

    def wait(self, refs, num_returns=1):
        return refs[-1:], refs[:-1]  # finish in reverse order: the driver must restore job order

    def get(self, ref):
        return ref.value


@pytest.fixture
def fake_ray(monkeypatch):
    def install(resources, initialized=False):
        ray = FakeRay(resources, initialized)
        monkeypatch.setitem(sys.modules, "ray", ray)
        monkeypatch.setattr(executors, "run_job", fake_run_job)
        return ray
    return install


@pytest.mark.parametrize("resources, gpus", [({"CPU": 8.0}, 0), ({"CPU": 8.0, "GPU": 2.0}, 1)])
def test_ray_requests_a_gpu_per_task_only_when_the_cluster_has_gpus(fake_ray, resources, gpus):
    ray = fake_ray(resources)
    seen = []
    results = RayExecutor(num_cpus=8).run(JOBS, ITEMS, ScoreSettings(device="auto"), on_result=lambda r: seen.append(r))
    assert ray.calls["remote"] == {"num_cpus": 1, "num_gpus": gpus, "max_retries": 0}
    assert [r.job for r in results] == JOBS and [r.job for r in seen] == JOBS[::-1]
    assert ray.calls["put"] == [ITEMS["A"], ITEMS["B"]]  # each benchmark's items shipped once, unused ones not
    assert ray.calls["init"]["num_cpus"] == 8 and ray.calls.get("shutdown")


def test_ray_joins_a_cluster_by_address_and_forwards_offline_settings(fake_ray, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ray = fake_ray({"CPU": 2.0})
    ex = RayExecutor(address="ray://head:10001", num_cpus=64)
    ex.run(JOBS[:1], ITEMS, ScoreSettings())
    init = ray.calls["init"]
    assert init["address"] == "ray://head:10001" and "num_cpus" not in init
    assert init["runtime_env"]["env_vars"]["HF_HUB_OFFLINE"] == "1"
    assert ex.describe() == {"name": "ray", "address": "ray://head:10001", "resources": {"CPU": 2.0},
                             "gpus_per_task": 0, "cpus_per_task": 1, "ray_version": "0.test"}


def test_ray_already_running_is_reused_and_left_running(fake_ray):
    ray = fake_ray({"CPU": 2.0}, initialized=True)
    RayExecutor().run(JOBS[:1], ITEMS, ScoreSettings())
    assert "init" not in ray.calls and "shutdown" not in ray.calls


def test_ray_missing_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(StereosetEvalError, match=r"pip install 'stereoset-eval\[ray\]'"):
        RayExecutor().run(JOBS, ITEMS, ScoreSettings())


class _TaskError(Exception):
    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


@pytest.mark.parametrize("cause, expected", [(StereosetEvalError("model x: bad"), StereosetEvalError),
                                             (ZeroDivisionError("bug"), _TaskError)])
def test_task_errors_surface_as_the_toolkits_own_errors(cause, expected):
    class Ray:
        exceptions = types.SimpleNamespace(RayTaskError=_TaskError)

        def get(self, ref):
            raise _TaskError(cause)

    with pytest.raises(expected) as err:
        RayExecutor._get(Ray(), object())
    if expected is StereosetEvalError:
        assert err.value is cause  # printed as one line by the CLI, as with the local executor


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
