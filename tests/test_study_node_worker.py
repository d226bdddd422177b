"""A Ray task's body, in this process (no Ray): the driver's scores in, only the missing ones out,
the node's own cache used and filled, and a node whose weights differ from the driver's record refused."""

from __future__ import annotations

import sys

import pytest

from stereoset_eval.scoring.cache import ScoreCache
from stereoset_eval.study.config import ModelSpec
from stereoset_eval.study.executors import ScoreSettings, run_job
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.study.node_worker import (NODE_CACHE_ENV, NODE_NAME_ENV, WeightsMismatchError,
                                              local_weights_sha256, score_on_node)
from stereoset_eval.study.plan import Job

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def pairs(crows_items):
    return crows_items[:6]


@pytest.fixture
def job(models_dir):
    return Job(ModelSpec(str(models_dir / "tiny-bert"), "tiny-bert"), "masked", "CrowS-Pairs", "crows-nangia")


def _settings(tmp_path):
    return ScoreSettings(device="cpu", cache_dir=str(tmp_path / "driver"))  # the driver's: never opened here


def test_the_driver_s_scores_are_not_computed_again_nor_sent_back(job, pairs, tmp_path, monkeypatch):
    monkeypatch.delenv(NODE_CACHE_ENV, raising=False)
    first = score_on_node(job, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    assert first.result.cache_stats == {"hits": 0, "computed": 12} and len(first.rows) == 6  # one row per pair
    assert {(model, method) for _k, model, method, _v in first.rows} == {(job.model.id, "crows-nangia")}
    known = {key: value for key, _m, _me, value in first.rows}
    again = score_on_node(job, pairs, _settings(tmp_path), known, index=0, expected_weights=None, run_job=run_job)
    assert again.result.cache_stats == {"hits": 12, "computed": 0} and again.rows == ()
    assert again.result.scores == first.result.scores
    assert not (tmp_path / "driver").exists()  # the driver's cache lives at the driver only
    assert again.result.provenance["run"]["cache_dir"] == str(tmp_path / "driver")
    ray = sys.modules.get("ray")
    assert ray is None or not ray.is_initialized()  # asking for the node id outside Ray must not start Ray


def test_the_node_cache_keeps_a_copy_and_offers_it_to_the_driver(job, pairs, tmp_path, monkeypatch):
    monkeypatch.setenv(NODE_CACHE_ENV, str(tmp_path / "node"))
    first = score_on_node(job, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    with ScoreCache(tmp_path / "node") as node:
        assert {r[0] for r in node.rows()} == {r[0] for r in first.rows}
    # a driver that lost its cache: the node's rows come back to it, nothing is computed
    again = score_on_node(job, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    assert again.result.cache_stats["computed"] == 0 and again.rows == first.rows
    assert [p.name for p in (tmp_path / "node").iterdir() if p.is_dir()] == []  # scratch folders removed


def test_other_weights_than_the_driver_s_record_are_refused_before_scoring(job, pairs, tmp_path, models_dir):
    real = local_weights_sha256(job.model.id, None)
    assert real and len(real) == 64
    with pytest.raises(WeightsMismatchError, match=r"model tiny-bert .*: the weights on node .* driver's record"):
        score_on_node(job, pairs, _settings(tmp_path), {}, index=0, expected_weights="0" * 64, run_job=run_job)


def _copy_model(src, dst, *, perturb: bool = False):
    """A node's own copy of a fixture model; ``perturb``: the same architecture, other weights."""
    import shutil

    shutil.copytree(src, dst)
    for p in dst.iterdir():
        p.chmod(0o644)  # the fixtures are read-only
    if perturb:
        from safetensors.torch import load_file, save_file

        tensors = load_file(dst / "model.safetensors")
        first = sorted(tensors)[0]
        tensors[first] = tensors[first] + 0.5
        save_file(tensors, dst / "model.safetensors", metadata={"format": "pt"})
    return dst


def _with_paths(job, paths):
    import dataclasses

    return dataclasses.replace(job, model=dataclasses.replace(job.model, paths=paths))


def test_a_node_loads_the_folder_the_study_declares_for_it_under_the_driver_s_identity(job, pairs, tmp_path,
                                                                                      monkeypatch, models_dir):
    """Keys and numbers are those of the model's id: the driver's cache serves every node."""
    monkeypatch.delenv(NODE_CACHE_ENV, raising=False)
    plain = score_on_node(job, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    copy = _copy_model(models_dir / "tiny-bert", tmp_path / "node-a" / "bert-copy")
    monkeypatch.setenv(NODE_NAME_ENV, "node-a")
    declared = _with_paths(job, {"other-node": "/nowhere/bert", "node-a": str(copy)})
    got = score_on_node(declared, pairs, _settings(tmp_path), {}, index=0,
                        expected_weights=local_weights_sha256(job.model.id, None), run_job=run_job)
    assert got.result.provenance["run"]["model_loaded_from"] == str(copy)
    assert got.result.provenance["model"]["id"] == job.model.id
    assert got.rows == plain.rows  # the same cache keys, model column and values as loading the id
    assert {k: repr(v) for k, v in got.result.scores.items()} == {k: repr(v) for k, v in plain.result.scores.items()}
    assert plain.result.provenance["run"]["model_loaded_from"] is None  # no key matched: the id was loaded
    monkeypatch.setenv(NODE_NAME_ENV, "node-b")
    other = score_on_node(declared, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    assert other.result.provenance["run"]["model_loaded_from"] is None


def test_another_checkpoint_at_a_node_s_declared_path_is_an_error_naming_model_and_node(job, pairs, tmp_path,
                                                                                       monkeypatch, models_dir):
    monkeypatch.delenv(NODE_CACHE_ENV, raising=False)
    monkeypatch.setenv(NODE_NAME_ENV, "node-a")
    copy = _copy_model(models_dir / "tiny-bert", tmp_path / "bert-other", perturb=True)
    declared = _with_paths(job, {"node-a": str(copy)})
    with pytest.raises(WeightsMismatchError, match=r"^model tiny-bert \(.*\): the weights on node node-a/None "
                                                   r"\(paths\.node-a = .*bert-other\) have sha256 .* driver's record"):
        score_on_node(declared, pairs, _settings(tmp_path), {}, index=0,
                      expected_weights=local_weights_sha256(job.model.id, None), run_job=run_job)


def test_a_declared_folder_missing_on_its_node_is_a_one_line_error(job, pairs, tmp_path, monkeypatch):
    monkeypatch.setenv(NODE_NAME_ENV, "node-a")
    declared = _with_paths(job, {"node-a": str(tmp_path / "absent")})
    with pytest.raises(StereosetEvalError, match=r"^model tiny-bert: the folder the study declares for node node-a "
                                                 r"\(models\.paths\) is not a folder on node node-a") as err:
        score_on_node(declared, pairs, _settings(tmp_path), {}, index=0, expected_weights=None, run_job=run_job)
    assert "\n" not in str(err.value)


def test_paths_match_the_node_name_then_the_host_name_then_the_ip():
    from stereoset_eval.study.node_worker import declared_path

    model = ModelSpec("bert", "bert", paths={"10.0.0.2": "/ip", "gpu-3": "/host", "n2": "/name"})
    assert declared_path(model, {"name": "n2", "host": "gpu-3", "ip": "10.0.0.2"}) == ("n2", "/name")
    assert declared_path(model, {"name": None, "host": "gpu-3", "ip": "10.0.0.2"}) == ("gpu-3", "/host")
    assert declared_path(model, {"name": "x", "host": "y", "ip": "10.0.0.2"}) == ("10.0.0.2", "/ip")
    assert declared_path(model, {"name": "x", "host": "y", "ip": None}) is None
    assert declared_path(ModelSpec("bert", "bert"), {"name": "n2"}) is None
