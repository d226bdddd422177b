"""The result cache: reruns skip cached work; an interrupted run resumes to identical numbers."""

from __future__ import annotations

import sqlite3

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.fixture(scope="module")
def pairs(crows_items):
    return crows_items[:10]


@pytest.fixture(scope="module")
def intra(stereoset_items):
    return [it for it in stereoset_items if it.task == "intrasentence"][:6]


def _score(items, models_dir, model, method, cache_dir, **kw):
    from stereoset_eval.scoring import score_items

    return score_items(items, model=str(models_dir / model), method=method, cache_dir=cache_dir, **kw)


def _same(a, b) -> None:
    assert [r.to_dict() for r in a.records] == [r.to_dict() for r in b.records]


def test_rerun_reads_the_cache(pairs, models_dir, tmp_path):
    first = _score(pairs, models_dir, "tiny-bert", "crows-nangia", tmp_path)
    assert first.cache_stats == {"hits": 0, "computed": 20}
    second = _score(pairs, models_dir, "tiny-bert", "crows-nangia", tmp_path)
    assert second.cache_stats == {"hits": 20, "computed": 0}
    _same(first, second)
    assert second.provenance["run"]["cache_hits"] == 20
    grown = _score(pairs + [], models_dir, "tiny-bert", "crows-nangia", tmp_path, options={"round_ndigits": None})
    assert grown.cache_stats["hits"] == 0  # every option is in the key
    assert all(r.score == r.extra["unrounded"] for r in grown.records)


def test_no_cache_reads_and_writes_nothing(pairs, models_dir, tmp_path):
    _score(pairs[:2], models_dir, "tiny-bert", "pll", tmp_path, use_cache=False)
    assert not (tmp_path / "scores.sqlite3").exists()
    cached = _score(pairs[:2], models_dir, "tiny-bert", "pll", tmp_path)
    again = _score(pairs[:2], models_dir, "tiny-bert", "pll", tmp_path, use_cache=False)
    assert again.cache_stats == {"hits": 0, "computed": 4}
    assert cached.scores == pytest.approx(again.scores, abs=1e-9)


def test_key_separates_models_methods_and_options(intra, models_dir, tmp_path):
    a = _score(intra, models_dir, "tiny-roberta", "stereoset-mlm", tmp_path)
    b = _score(intra, models_dir, "tiny-roberta", "stereoset-mlm", tmp_path, options={"leading_space": "bias-bench"})
    c = _score(intra, models_dir, "tiny-bert", "stereoset-mlm", tmp_path)
    assert (a.cache_stats["hits"], b.cache_stats["hits"], c.cache_stats["hits"]) == (0, 0, 0)
    assert a.scores != b.scores
    d = _score(intra, models_dir, "tiny-bert", "stereoset-mlm", tmp_path, options={"leading_space": "bias-bench"})
    # bias-bench changes nothing for WordPiece, but the key records the option as given
    assert d.cache_stats["hits"] == 0 and d.scores == pytest.approx(c.scores, rel=1e-6)


def test_cache_uses_wal_and_records_what_it_holds(pairs, models_dir, tmp_path):
    _score(pairs[:2], models_dir, "tiny-bert", "crows-nangia", tmp_path)
    db = sqlite3.connect(tmp_path / "scores.sqlite3")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = db.execute("SELECT model, method FROM results").fetchall()
    assert len(rows) == 2 and {m for _, m in rows} == {"crows-nangia"}
    assert rows[0][0].endswith("tiny-bert")


@pytest.mark.parametrize("overlap", [False, True], ids=["sequential", "overlapped"])
@pytest.mark.parametrize("method, model, which", [("crows-nangia", "tiny-bert", "pairs"),
                                                   ("stereoset-mlm", "tiny-roberta", "intra")])
def test_interrupted_run_resumes_to_identical_results(method, model, which, overlap, pairs, intra, models_dir,
                                                      tmp_path, monkeypatch):
    """Also with groups overlapped as on CUDA (``overlap``, forced here on the CPU scorer): the
    group read back before the interruption is committed, the rerun is bit-identical."""
    from stereoset_eval.scoring.scorers import Scorer

    monkeypatch.setattr(Scorer, "asynchronous", overlap)
    items = {"pairs": pairs[1:6], "intra": intra}[which]
    budget = 96  # small batches: several forward passes per group, several groups
    calls = {"n": 0, "crash_at": None}
    real_launch = Scorer.launch

    def counting_launch(self, rows):
        calls["n"] += 1
        if calls["n"] == calls["crash_at"]:
            raise KeyboardInterrupt("simulated kill in the middle of a run")
        return real_launch(self, rows)

    monkeypatch.setattr(Scorer, "launch", counting_launch)
    reference = _score(items, models_dir, model, method, tmp_path / "fresh", batch_tokens=budget)
    calls.update(n=0, crash_at=calls["n"] // 2 + 1)  # half-way through the forward passes
    assert calls["crash_at"] > 2

    with pytest.raises(KeyboardInterrupt):
        _score(items, models_dir, model, method, tmp_path / "resume", batch_tokens=budget)
    monkeypatch.setattr(Scorer, "launch", real_launch)
    committed = sqlite3.connect(tmp_path / "resume" / "scores.sqlite3").execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert 0 < committed < len(reference.records)

    resumed = _score(items, models_dir, model, method, tmp_path / "resume", batch_tokens=budget)
    per_unit = 2 if method == "crows-nangia" else 1
    assert resumed.cache_stats["hits"] == committed * per_unit
    assert resumed.cache_stats["computed"] == len(reference.records) - committed * per_unit
    _same(reference, resumed)  # bit-identical: the unfinished group is recomputed with the same batches
    assert resumed.provenance["run"]["execution"]["overlap"] is overlap


_OPEN_FRESH = """
import sys, time
from stereoset_eval.scoring.cache import ScoreCache
ScoreCache(sys.argv[1]).put_many({"k": [1.0]}, model="m", method="x")
print("ok")
"""


def test_fresh_cache_opens_while_another_process_holds_the_setup_lock(tmp_path):
    """Two processes opening a fresh cache at once: the second waits for the first's set-up."""
    import fcntl
    import os
    import subprocess
    import sys
    import time

    from stereoset_eval.scoring.cache import FILENAME

    lock = os.open(tmp_path / (FILENAME + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(lock, fcntl.LOCK_EX)
    proc = subprocess.Popen([sys.executable, "-c", _OPEN_FRESH, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)
    assert proc.poll() is None  # waiting on the lock, not failing with "database is locked"
    os.close(lock)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out.strip() == "ok"


def test_many_processes_open_one_fresh_cache_at_once(tmp_path):
    import subprocess
    import sys

    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_FRESH, str(tmp_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(6)]
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in results]


def test_cache_keys_are_cache_key_of_each_unit():
    from stereoset_eval.scoring.cache import cache_key, cache_keys

    identity = {"model": "m", "revision": None, "weights_sha256": "ab", "tokenizer_sha256": "cd", "zeta": [1, 2]}
    options = {"lowercase": False, "leading_space": "none", "cap": None}
    inputs = [{"sentence": "The nurse was tired."}, {"sent2": "Ünïcödé — “quotes” \\ \"", "sent1": "a\nb"},
              {"context": "BLANK people", "sentence": "x", "nested": {"b": [1, 2.5, None], "a": True}}, {}]
    assert cache_keys(identity, "pll", 3, options, inputs) == [cache_key(identity, "pll", 3, options, u) for u in inputs]
    assert len(set(cache_keys(identity, "pll", 3, options, inputs))) == len(inputs)
