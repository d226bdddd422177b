"""A Ray task's body, in this process (no Ray): the driver's scores in, only the missing ones out,
the node's own cache used and filled, and a node whose weights differ from the driver's record refused."""

from __future__ import annotations

import sys

import pytest

from stereoset_eval.scoring.cache import ScoreCache
from stereoset_eval.study.config import ModelSpec
from stereoset_eval.study.executors import ScoreSettings, run_job
from stereoset_eval.study.node_worker import (NODE_CACHE_ENV, WeightsMismatchError, local_weights_sha256,
                                              score_on_node)
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
