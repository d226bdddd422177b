"""Commit groups overlapped by one, as a CUDA run does them (``execute(..., overlap=True)``).

On a device whose launches return before it has finished, the engine reads a group back,
reduces and commits it only after the next group's batches are queued behind it (with values
shared across methods: read back before the next group looks there), so its host work runs
while the device computes. These tests
force the overlap on the CPU (the scorer's ``asynchronous`` flag) and check what must not move:
the same batches, values and commits in the same order, reuse look-ups that see every earlier
group, and an interruption that loses no group already read back. The last tests check that small
groups left by reuse run together, in either order, and still commit one by one.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.score_tolerance import execution_counts

BUDGET = 160  # tokens per batch: several commit groups on a few CrowS-Pairs pairs


class _Log:
    """Launches (L), read-backs (R) and commits (C), in the order the engine made them."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.commits: list[list[str]] = []
        self.fail_at_launch: int | None = None

    def string(self) -> str:
        return "".join(self.events)


def _instrument(monkeypatch, scorer_cls, log: _Log, overlap: bool) -> None:
    from stereoset_eval.scoring.cache import ScoreCache

    monkeypatch.setattr(scorer_cls, "asynchronous", overlap)
    real_launch, real_put = scorer_cls.launch, ScoreCache.put_many

    class Logged:
        def __init__(self, inner) -> None:
            self.inner = inner

        def result(self):
            log.events.append("R")
            return self.inner.result()

    def launch(self, rows):
        if log.fail_at_launch is not None and log.events.count("L") + 1 == log.fail_at_launch:
            raise KeyboardInterrupt("simulated interruption")
        log.events.append("L")
        return Logged(real_launch(self, rows))

    def put_many(self, entries, **kw):
        log.events.append("C")
        log.commits.append(sorted(entries))
        return real_put(self, entries, **kw)

    monkeypatch.setattr(scorer_cls, "launch", launch)
    monkeypatch.setattr(ScoreCache, "put_many", put_many)


def _score(items, model: str, method: str, cache_dir: Path, **kw):
    from stereoset_eval.scoring.api import score_items

    return score_items(items, model=model, method=method, device="cpu", batch_tokens=BUDGET, cache_dir=cache_dir, **kw)


def _numbers(score_set) -> dict[str, tuple]:
    return {r.sentence_id: (r.score, r.token_logprobs) for r in score_set.records}


@pytest.mark.parametrize("model_kind", ["fixture", "fake"])
def test_overlap_keeps_batches_values_and_commits_and_moves_only_the_waits(model_kind, models_dir, crows_items,
                                                                         tmp_path, monkeypatch):
    from stereoset_eval.scoring.fake import FakeScorer
    from stereoset_eval.scoring.scorers import Scorer

    model, scorer_cls = (str(models_dir / "tiny-bert"), Scorer) if model_kind == "fixture" else ("fake:masked", FakeScorer)
    items = crows_items[:12]
    runs = {}
    for overlap in (False, True):
        log = _Log()
        with monkeypatch.context() as m:
            _instrument(m, scorer_cls, log, overlap)
            runs[overlap] = (_score(items, model, "pll", tmp_path / f"cache-{overlap}"), log)
    (seq, seq_log), (over, over_log) = runs[False], runs[True]
    assert len(seq_log.commits) >= 3  # several groups, or there is nothing to overlap
    assert _numbers(seq) == _numbers(over)  # the same batches: bit-identical
    assert seq_log.commits == over_log.commits  # the same groups, committed in the same order
    assert execution_counts(seq) == {**execution_counts(over), "overlap": False}
    assert over.provenance["run"]["execution"]["overlap"] is True
    # sequential: each group is launched, read back and committed before the next is launched
    assert re.fullmatch(r"(L+R+C)+", seq_log.string()), seq_log.string()
    # overlapped: group k+1 is queued behind k, then k is read back, reduced and committed
    assert re.fullmatch(r"L+(L+R+C)+R+C", over_log.string()), over_log.string()


def test_overlapped_reuse_sees_every_earlier_group(models_dir, crows_items, tmp_path, monkeypatch):
    """With masked inputs shared across methods, what a group finds in the shared values does
    not depend on the overlap: the same rows reused, the same numbers."""
    from stereoset_eval.scoring.scorers import Scorer
    from stereoset_eval.scoring.settings import RunSettings
    from stereoset_eval.scoring.shared_work import SharedWork

    items = crows_items[:12]
    seen = {}
    for overlap in (False, True):
        monkeypatch.setattr(Scorer, "asynchronous", overlap)
        shared = SharedWork()
        out = [_score(items, str(models_dir / "tiny-bert"), m, tmp_path / f"c-{overlap}-{m}", shared=shared,
                      settings=RunSettings(share_masked_inputs="on")) for m in ("pll", "crows-nangia", "pll-word-l2r")]
        seen[overlap] = ([_numbers(s) for s in out], [s.provenance["run"]["execution"]["rows_reused"] for s in out])
    assert seen[False] == seen[True]
    assert seen[True][1][1] > 0  # crows-nangia did reuse pll's masked inputs


@pytest.mark.parametrize("overlap", [False, True])
def test_an_interruption_commits_every_group_already_read_back(overlap, crows_items, tmp_path, monkeypatch):
    from stereoset_eval.scoring.fake import FakeScorer

    items = crows_items[:12]
    log = _Log()
    with monkeypatch.context() as m:
        _instrument(m, FakeScorer, log, False)
        full = _score(items, "fake:masked", "pll", tmp_path / "full")
    groups = log.commits
    launches_per_group = [len(x) for x in re.findall(r"L+", log.string())]
    assert len(groups) >= 3
    # interrupt the first launch of the third group
    log = _Log()
    log.fail_at_launch = launches_per_group[0] + launches_per_group[1] + 1
    _instrument(monkeypatch, FakeScorer, log, overlap)
    with pytest.raises(KeyboardInterrupt):
        _score(items, "fake:masked", "pll", tmp_path / "cut")
    assert log.commits == groups[:2]  # both groups before the interrupted one, overlapped or not
    monkeypatch.undo()
    resumed = _score(items, "fake:masked", "pll", tmp_path / "cut")
    assert _numbers(resumed) == _numbers(full)


@pytest.mark.parametrize("overlap", [False, True])
def test_a_later_group_reuses_an_input_an_earlier_group_computed(overlap):
    """Units A, C, D, B under a 4-token budget: B has A's input but lands in the second group, so
    it is reused only if the first group's values reached the shared values before the second
    group looked there — which the overlap must keep."""
    from stereoset_eval.scoring.engine import RunStats, execute
    from stereoset_eval.scoring.methods.pll import PLL_METHOD
    from stereoset_eval.scoring.requests import Done, plan_groups

    inputs = {"A": (1, 2), "C": (3, 4), "D": (5, 6), "B": (1, 2)}
    units, prepared = _synthetic(inputs)
    assert plan_groups([p.requests for p in prepared], 4) == [[0, 1], [2, 3]]  # B after A's group
    launched: list[tuple] = []

    def launch(rows):
        launched.extend(r.input_ids for r in rows)
        return Done([[-float(r.input_ids[0])] for r in rows])

    stats, shared = RunStats(), {}
    results = execute(PLL_METHOD, units, prepared, list(inputs), {}, launch, batch_tokens=4, cached={},
                      shared=shared, stats=stats, overlap=overlap)
    assert sorted(launched) == [(1, 2), (3, 4), (5, 6)]  # A's input ran once
    assert (stats.rows_computed, stats.rows_reused) == (3, 1)
    assert [r[0].score for r in results] == [-1.0, -3.0, -5.0, -1.0]


def test_the_simulated_device_measurement_runs_both_orders(shared_dir):
    """``speed/simulated_device.py`` (the overlap's figures in speed/README.md): both orders run,
    each with its ``run.execution.overlap`` (checked inside), on a few real pairs."""
    from speed.simulated_device import measure

    row = measure(shared_dir / "fixtures" / "models" / "tiny-bert", "pll", "crows-pairs", shared_dir / "data",
                  device_s=0.05, rounds=1, n_items=8)
    assert row["n_items"] == 8 and row["sequential_s"] > 0.05 and row["overlapped_s"] > 0.05


def _synthetic(inputs: dict[str, tuple[int, ...]]):
    """Units with one pll-style request each (scored at position 1), for :func:`execute` directly."""
    from stereoset_eval.scoring.methods.base import Prepared, UnitSpec
    from stereoset_eval.scoring.requests import Request

    units = [UnitSpec(n, (n,), ("sentence",), {"sentence": n}) for n in inputs]
    prepared = [Prepared([Request(ids, ((1, ids[1]),))], {"token_ids": [ids[1]]}) for ids in inputs.values()]
    return units, prepared


@pytest.mark.parametrize("overlap", [False, True])
def test_small_groups_left_by_reuse_run_together_and_commit_one_by_one(overlap):
    """Reuse leaves one row in each of two groups: the two rows run in one batch, and each group is
    still reduced and committed on its own, in group order."""
    from stereoset_eval.scoring.engine import RunStats, execute
    from stereoset_eval.scoring.methods.pll import PLL_METHOD
    from stereoset_eval.scoring.requests import Done, plan_groups

    names = "ABCDEFGH"
    inputs = {n: (10 + i, 20 + i) for i, n in enumerate(names)}
    units, prepared = _synthetic(inputs)
    assert plan_groups([p.requests for p in prepared], 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    shared = {(((10 + i, 20 + i), None), 1, 20 + i): -0.5 for i, n in enumerate(names) if n not in "DH"}
    batches: list[list[str]] = []

    def launch(rows):
        batches.append([names[r.input_ids[0] - 10] for r in rows])
        return Done([[-float(r.input_ids[0])] for r in rows])

    commits: list[list[str]] = []
    stats = RunStats()
    results = execute(PLL_METHOD, units, prepared, list(names), {}, launch, batch_tokens=8, cached={},
                      commit=lambda fresh: commits.append(sorted(fresh)), shared=shared, stats=stats, overlap=overlap)
    assert batches == [["D", "H"]]  # one batch for both groups' rows, not one per group
    assert commits == [["A", "B", "C", "D"], ["E", "F", "G", "H"]]
    assert (stats.rows_computed, stats.rows_reused, stats.batches) == (2, 6, 1)
    assert [r[0].score for r in results] == [-0.5, -0.5, -0.5, -13.0, -0.5, -0.5, -0.5, -17.0]


@pytest.mark.parametrize("overlap", [False, True])
def test_a_row_waiting_with_small_groups_is_not_run_twice(overlap):
    """A later group that is not small needs an input a waiting small group has: the waiting rows
    run first and are read back, so the later group reuses that input instead of running it again."""
    from stereoset_eval.scoring.engine import RunStats, execute
    from stereoset_eval.scoring.methods.pll import PLL_METHOD
    from stereoset_eval.scoring.requests import Done, plan_groups

    inputs = {"A": (1, 2), "B": (3, 4), "C": (5, 6), "D": (7, 8), "E": (9, 10), "F": (11, 12), "G": (13, 14),
              "D2": (7, 8)}
    units, prepared = _synthetic(inputs)
    assert plan_groups([p.requests for p in prepared], 8) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    shared = {(((a, b), None), 1, b): -0.5 for a, b in (inputs["A"], inputs["B"], inputs["C"])}
    batches: list[list[tuple]] = []

    def launch(rows):
        batches.append([r.input_ids for r in rows])
        return Done([[-float(r.input_ids[0])] for r in rows])

    stats = RunStats()
    results = execute(PLL_METHOD, units, prepared, list(inputs), {}, launch, batch_tokens=8, cached={},
                      shared=shared, stats=stats, overlap=overlap)
    assert batches == [[(7, 8)], [(9, 10), (11, 12), (13, 14)]]  # D's input once
    assert (stats.rows_computed, stats.rows_reused) == (4, 4)
    assert [r[0].score for r in results] == [-0.5, -0.5, -0.5, -7.0, -9.0, -11.0, -13.0, -7.0]


@pytest.mark.parametrize("overlap", [False, True])
def test_the_run_records_the_time_spent_launching_and_reading_back(overlap, crows_items, tmp_path, monkeypatch):
    """``run.execution``'s ``launch_s`` and ``read_s`` hold the time spent in the scorer's launches
    and read-backs (here each made 20 ms slower), within the run's wall time; host work is the rest."""
    import time

    from stereoset_eval.scoring.fake import FakeScorer

    monkeypatch.setattr(FakeScorer, "asynchronous", overlap)
    real_launch = FakeScorer.launch

    class SlowRead:
        def __init__(self, inner) -> None:
            self.inner = inner

        def result(self):
            time.sleep(0.02)
            return self.inner.result()

    def slow_launch(self, rows):
        time.sleep(0.02)
        return SlowRead(real_launch(self, rows))

    monkeypatch.setattr(FakeScorer, "launch", slow_launch)
    run = _score(crows_items[:12], "fake:masked", "pll", tmp_path / "cache")
    execution, wall = run.provenance["run"]["execution"], run.provenance["run"]["wall_time_s"]
    assert execution["batches"] >= 3
    assert execution["launch_s"] >= 0.02 * execution["batches"]
    assert execution["read_s"] >= 0.02 * execution["batches"]
    assert execution["launch_s"] + execution["read_s"] <= wall + 1e-3
