"""Run a study's scoring jobs: one after another (``local``) or as Ray tasks (``ray``).

Both executors call the same :func:`run_job` (which calls :func:`stereoset_eval.scoring.score_items`) and
return the same :class:`JobResult` list in job order, so the analysis cannot tell them apart.
Results go through the scoring engine's SQLite cache, so a rerun — with either executor —
only computes what is new.

Ray: one task per (model, benchmark, method), with one GPU requested when the cluster has
GPUs; it connects to an existing cluster (``address``: ``auto``, ``ray://host:10001`` …) or
starts a local one (``num_cpus``). Ray does the scheduling and the retries; the driver owns
the cache and sends each task the scores it already has (:mod:`stereoset_eval.study.ray_cluster`),
so no folder needs to be shared between nodes (docs/ray.md).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.study.plan import Job
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item

#: environment variables forwarded to Ray workers (a remote cluster does not inherit the driver's)
FORWARDED_ENV: tuple[str, ...] = (
    "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_HOME", "HF_HUB_CACHE", "TRANSFORMERS_OFFLINE",
    "STEREOSET_EVAL_DATA",
)  # not STEREOSET_EVAL_CACHE: the driver owns the cache; a node's own is $STEREOSET_EVAL_NODE_CACHE
OnResult = Callable[["JobResult"], None]


@dataclass(frozen=True)
class ScoreSettings(RunSettings):
    """Scoring options shared by every job: the :class:`RunSettings` plus where the cache is
    (part of the provenance; device/dtype change numbers)."""

    cache_dir: str | None = None
    use_cache: bool = True

    @classmethod
    def of(cls, run: RunSettings, *, cache_dir: str | None = None, use_cache: bool = True) -> "ScoreSettings":
        return cls(**run.run_settings().to_dict(), cache_dir=cache_dir, use_cache=use_cache)


@dataclass(frozen=True)
class JobResult:
    """What one job produced: per-sentence scores, their provenance and cache statistics."""

    job: Job
    scores: Mapping[str, float]
    provenance: Mapping[str, Any]
    cache_stats: Mapping[str, int]
    wall_time_s: float
    worker: Mapping[str, Any] = field(default_factory=dict)


def run_job(job: Job, items: Sequence[Item], settings: ScoreSettings, *, progress: bool = False,
            load_from: str | None = None, shared: Any = None) -> JobResult:
    """Score ``items`` for one job (in this process); the unit of work of every executor.

    ``progress`` shows a bar (sentences done / total, rate, ETA); it changes no number.
    ``load_from``: this node's folder of the model (its ``paths`` entry); None loads ``job.model.id``.
    ``shared``: a :class:`~stereoset_eval.scoring.shared_work.SharedWork` of the jobs run in this
    process, so masked inputs another job already ran on the same model are not run again.
    """
    from stereoset_eval.scoring.api import score_items

    started = time.perf_counter()
    result = score_items(
        items,
        model=job.model.id,
        method=job.method,
        options=job.options or None,
        revision=job.model.revision,
        settings=settings.run_settings(),
        cache_dir=settings.cache_dir,
        use_cache=settings.use_cache,
        progress=progress,
        load_from=load_from,
        shared=shared,
    )
    return JobResult(
        job=job,
        scores=dict(result.scores),
        provenance=result.provenance,
        cache_stats=dict(result.cache_stats),
        wall_time_s=round(time.perf_counter() - started, 3),
        worker={"host": socket.gethostname(), "pid": os.getpid()},
    )


class Executor(Protocol):
    """Runs jobs and returns their results in job order."""

    name: str

    def run(self, jobs: Sequence[Job], items: Mapping[str, Sequence[Item]], settings: ScoreSettings, *,
            on_result: OnResult | None = None) -> list[JobResult]: ...

    def describe(self) -> dict[str, Any]: ...


class LocalExecutor:
    """Jobs one after another in this process (models in config order, so each loads once)."""

    name = "local"

    def __init__(self, *, progress: bool = False) -> None:
        self.progress = progress  # one bar per job on stderr

    def run(self, jobs: Sequence[Job], items: Mapping[str, Sequence[Item]], settings: ScoreSettings, *,
            on_result: OnResult | None = None) -> list[JobResult]:
        from stereoset_eval.scoring.shared_work import SharedWork

        results = []
        shared = SharedWork()  # jobs of one model share their masked inputs (models run one after another)
        for i, job in enumerate(jobs, 1):
            if self.progress:
                import sys

                print(f"job {i}/{len(jobs)}: {job.key} ({len(items[job.benchmark])} items)", file=sys.stderr, flush=True)
            res = run_job(job, items[job.benchmark], settings, progress=self.progress, shared=shared)
            if on_result is not None:
                on_result(res)
            results.append(res)
        return results

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}


CLIENT_CONNECT_ATTEMPTS = 3  # ray:// connections: the head's proxy may fail to start this client's server
CLIENT_RETRY_WAIT_S = 2.0  # seconds before the second attempt (twice that before the third)


def _client_server_start_failed(exc: BaseException) -> bool:
    """True for Ray Client's transient "the head could not start this client's server in time"
    (seen on a loaded 2-core head: ``Starting Ray client server failed`` / a gRPC channel timeout),
    which a new connection usually gets past; any other failure is reported at once."""
    text = str(exc)
    return "Starting Ray client server failed" in text or "Initialization failure from server" in text


def _quiet_shutdown(ray: Any) -> None:
    """Drop a half-made client connection before trying again."""
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - nothing to drop is fine
        pass


class RayExecutor:
    """One Ray task per job; connects to ``address`` or starts a local instance.

    Args:
        address: an existing cluster (``auto``, ``ray://host:10001``, ``host:6379``); None
            starts a local Ray instance (shut down again when the run ends).
        num_cpus: CPUs of the local instance (ignored when connecting).
        cpus_per_task: CPUs each task requests.
        gpus_per_task: GPUs each task requests; None = 1 if the cluster has GPUs, else 0.
        max_retries: times Ray resubmits a task whose worker or node died (or that raised a
            retryable error, :data:`~stereoset_eval.study.ray_cluster.RETRYABLE`).
        on_progress: called with each new :class:`~stereoset_eval.study.progress.Progress`
            (default: with ``progress``, one line on stderr — jobs done / running (on which node) /
            queued, ETA; without, logged at INFO by ``stereoset_eval.study.ray_cluster``).
        progress: print the driver's progress lines (what ``--no-progress`` turns off).
    """

    name = "ray"

    def __init__(self, *, address: str | None = None, num_cpus: int | None = None, cpus_per_task: float = 1,
                 gpus_per_task: float | None = None, max_retries: int | None = None,
                 on_progress: Callable[[Any], None] | None = None, progress: bool = False) -> None:
        from stereoset_eval.study.ray_cluster import DEFAULT_MAX_RETRIES

        self.address, self.num_cpus = address, num_cpus
        self.cpus_per_task, self.gpus_per_task = cpus_per_task, gpus_per_task
        self.max_retries = DEFAULT_MAX_RETRIES if max_retries is None else max_retries
        self.on_progress = on_progress if on_progress is not None else (print_progress if progress else None)
        self._cluster: dict[str, Any] = {}

    def _ray(self) -> Any:
        try:
            import ray
        except ImportError:
            raise StereosetEvalError(
                "the ray executor needs Ray: pip install 'stereoset-eval[ray]' (or pip install 'ray[default]')"
            ) from None
        return ray

    def _start(self, ray: Any) -> bool:
        """Connect or start; True when this executor started Ray (and must shut it down)."""
        if ray.is_initialized():
            return False
        env = {k: os.environ[k] for k in FORWARDED_ENV if k in os.environ}
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                  "runtime_env": {"env_vars": env} if env else None}
        if self.address:
            kwargs["address"] = self.address
        elif self.num_cpus is not None:
            kwargs["num_cpus"] = self.num_cpus
        attempts = CLIENT_CONNECT_ATTEMPTS if str(self.address or "").startswith("ray://") else 1
        for attempt in range(1, attempts + 1):
            try:
                ray.init(**kwargs)
                return True
            except (ConnectionError, RuntimeError, ValueError) as exc:
                if attempt < attempts and _client_server_start_failed(exc):
                    _quiet_shutdown(ray)
                    time.sleep(CLIENT_RETRY_WAIT_S * attempt)
                    continue
                where = self.address or "a local instance"
                tries = f" (after {attempt} attempts)" if attempt > 1 else ""
                raise StereosetEvalError(f"cannot start Ray ({where}){tries}: {exc}") from None
        return True

    def run(self, jobs: Sequence[Job], items: Mapping[str, Sequence[Item]], settings: ScoreSettings, *,
            on_result: OnResult | None = None) -> list[JobResult]:
        ray = self._ray()
        started_here = self._start(ray)
        try:
            resources = ray.cluster_resources()
            gpus = self.gpus_per_task if self.gpus_per_task is not None else (1 if resources.get("GPU", 0) else 0)
            self._cluster = {"address": self.address or "local", "resources": {k: resources[k] for k in
                             ("CPU", "GPU") if k in resources}, "gpus_per_task": gpus,
                             "cpus_per_task": self.cpus_per_task, "ray_version": ray.__version__}
            from stereoset_eval.study.ray_cluster import ClusterOutcome, run_jobs

            outcome = ClusterOutcome()
            try:
                return run_jobs(ray, jobs, items, settings, run_job=run_job, on_result=on_result,
                                on_progress=self.on_progress,
                                outcome=outcome, task_options={"num_cpus": self.cpus_per_task, "num_gpus": gpus,
                                                               "max_retries": self.max_retries})
            finally:
                self._cluster.update(max_retries=self.max_retries, **outcome.describe())
        finally:
            if started_here:
                ray.shutdown()

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self._cluster}


def print_progress(progress: Any) -> None:
    """One line of a Ray study's progress on stderr (``jobs 3/14 done, 2 running (… on host/node), 9 queued, ETA …``)."""
    import sys

    print(progress.line(), file=sys.stderr, flush=True)


def make_executor(name: str, *, address: str | None = None, num_cpus: int | None = None,
                  progress: bool = False) -> Executor:
    """``local`` or ``ray`` (unknown names list the known ones).

    ``progress``: local — a line and a bar per job (sentences done / total, ETA); ray — the
    driver's line whenever a job starts, finishes or moves (done / running with its node / queued, ETA).
    """
    if name == "local":
        return LocalExecutor(progress=progress)
    if name == "ray":
        return RayExecutor(address=address, num_cpus=num_cpus, progress=progress)
    from stereoset_eval.foundation.errors import UnknownNameError

    raise UnknownNameError("executor", name, ["local", "ray"])
