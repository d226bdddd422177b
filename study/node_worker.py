"""One job on a worker node of a Ray cluster: scores in, scores out, no shared file system.

The driver owns the score cache. A task receives the driver's cached results for its model and
method (``known``), scores its items against a private scratch cache seeded with them (plus
the node's own cache, if the node has one: ``$STEREOSET_EVAL_NODE_CACHE`` in the environment of
its ``ray start``), and returns every result the driver lacks, for the driver to commit. The
model is read from the folder the study declares for this node (``[models.paths]``, keyed by
the node's name ``$STEREOSET_EVAL_NODE_NAME``, its host name or its IP), else from its ``id``.
Before scoring, the node's copy of the weights is hashed and compared with the driver's
record: two nodes must never score different checkpoints under one name.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item
from stereoset_eval.study.plan import Job

NODE_CACHE_ENV = "STEREOSET_EVAL_NODE_CACHE"
NODE_NAME_ENV = "STEREOSET_EVAL_NODE_NAME"
Row = tuple[str, str, str, Any]  # (cache key, model, method, unit results)


class WeightsMismatchError(StereosetEvalError):
    """A node's copy of a model's weights differs from the driver's record (never retried)."""


@dataclass(frozen=True)
class NodeResult:
    """A job's result, the cache rows the driver lacks, the node it ran on and the attempt."""

    result: Any  # executors.JobResult
    rows: tuple[Row, ...]
    node: Mapping[str, Any]
    attempt: int


def model_column(model_id: str) -> str:
    """The cache's ``model`` column for a model (the backend's resolved id: a folder's absolute path)."""
    return os.path.abspath(model_id) if os.path.isdir(model_id) else model_id


def local_weights_sha256(model_id: str, revision: str | None, memo: Any = None) -> str | None:
    """sha256 of the weight files this machine would load for ``model_id`` (None: not available here)."""
    from stereoset_eval.scoring.fingerprint import fingerprint, model_directory

    directory, _ = model_directory(model_id, revision)
    if directory is None:
        return None
    return fingerprint(model_id, revision, memo=memo).get("weights_sha256")


def node_keys(node: Mapping[str, Any]) -> list[str]:
    """The names a study's ``paths`` may use for this node, in the order they are tried."""
    return [k for k in (node.get("name"), node.get("host"), node.get("ip")) if k]


def declared_path(model: Any, node: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(node key, folder)`` the study declares for ``model`` (a ``ModelSpec``) on this node; None: load its id."""
    paths = getattr(model, "paths", None) or {}
    for key in node_keys(node):
        if key in paths:
            return key, os.path.expanduser(paths[key])
    return None


def check_weights(job: Job, expected: str | None, actual: str | None, where: str) -> None:
    if expected and actual and expected != actual:
        raise WeightsMismatchError(
            f"model {job.model.name} ({job.model.id}): the weights on {where} have sha256 {actual[:16]}…, the "
            f"driver's record is {expected[:16]}…; every node must hold the same checkpoint")


def _node_info() -> dict[str, Any]:
    info: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "node_id": None,
                            "name": os.environ.get(NODE_NAME_ENV) or None, "ip": None,
                            "node_cache": os.environ.get(NODE_CACHE_ENV) or None}
    try:
        import ray

        if ray.is_initialized():  # else get_runtime_context() would start a local Ray instance
            info["node_id"] = ray.get_runtime_context().get_node_id()
            info["ip"] = ray.util.get_node_ip_address()
    except Exception:  # noqa: BLE001 - outside Ray (tests, local calls) there is no node id
        pass
    return info


def _announce(board: Any, index: int, node: Mapping[str, Any]) -> int:
    if board is None:
        return 1
    import ray

    try:
        return int(ray.get(board.started.remote(index, node["node_id"], node["host"], node["pid"]), timeout=60))
    except Exception:  # noqa: BLE001 - progress is best effort; the job itself must still run
        return 0


def score_on_node(job: Job, items: Sequence[Item], settings: Any, known: Mapping[str, Any], *, index: int,
                  expected_weights: str | None, run_job: Callable[..., Any],
                  board: Any = None) -> NodeResult:
    """Run one job here (a Ray task's body; ``run_job`` is the executors' unit of work); see the module docstring."""
    from stereoset_eval.scoring.cache import ScoreCache

    node = _node_info()
    attempt = _announce(board, index, node)
    where = f"node {node['name'] or node['host']}/{str(node['node_id'])[:8]}"
    declared, load_from = declared_path(job.model, node), None
    if declared is not None:
        key, load_from = declared
        where += f" (paths.{key} = {load_from})"
        if not os.path.isdir(load_from):
            raise StereosetEvalError(f"model {job.model.name}: the folder the study declares for node {key} "
                                     f"(models.paths) is not a folder on {where}")
    node_dir = node["node_cache"]
    node_cache = ScoreCache(node_dir) if node_dir and settings.use_cache else None
    try:
        check_weights(job, expected_weights,
                      local_weights_sha256(load_from or job.model.id, job.model.revision, node_cache), where)
        if not settings.use_cache:
            res = run_job(job, items, settings, load_from=load_from)
            return _finish(job, res, (), node, attempt, settings, expected_weights, where, load_from)
        column = model_column(job.model.id)
        scratch = Path(tempfile.mkdtemp(prefix="stereoset-eval-job-", dir=node_dir or None))
        try:
            with ScoreCache(scratch) as cache:
                mine = node_cache.rows(model=column, method=job.method) if node_cache is not None else []
                _put_rows(cache, [r for r in mine if r[0] not in known])
                _put_rows(cache, [(k, column, job.method, v) for k, v in known.items()])
                res = run_job(job, items, dataclasses.replace(settings, cache_dir=str(scratch)), load_from=load_from)
                rows = tuple(r for r in cache.rows() if r[0] not in known)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)  # the scratch folder this task created
        if node_cache is not None:
            _put_rows(node_cache, list(rows))
    finally:
        if node_cache is not None:
            node_cache.close()
    return _finish(job, res, rows, node, attempt, settings, expected_weights, where, load_from)


def _finish(job: Job, res: Any, rows: tuple[Row, ...], node: Mapping[str, Any], attempt: int, settings: Any,
            expected_weights: str | None, where: str, load_from: str | None) -> NodeResult:
    """Check the weights that were scored, and record where (node, folder, attempt) in the provenance."""
    check_weights(job, expected_weights, res.provenance.get("model", {}).get("weights_sha256"), where)
    run = dict(res.provenance.get("run", {}))
    run.update(cache_dir=settings.cache_dir, node=dict(node), attempt=attempt, model_loaded_from=load_from)
    res = dataclasses.replace(res, provenance={**res.provenance, "run": run}, worker=dict(node))
    return NodeResult(res, rows, node, attempt)


def _put_rows(cache: Any, rows: Sequence[Row]) -> None:
    by_group: dict[tuple[str, str], dict[str, Any]] = {}
    for key, model, method, value in rows:
        by_group.setdefault((model, method), {})[key] = value
    for (model, method), entries in by_group.items():
        cache.put_many(entries, model=model, method=method)
