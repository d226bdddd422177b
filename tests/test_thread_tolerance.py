"""Numbers independent of the thread count, within the tolerance the tool states (issue 33).

torch splits a float32 matrix product over its intra-op threads, so another thread count adds in
another order: ``stereoset-mlm`` probabilities moved in the 7th significant digit between 1 and
2 threads on this machine. The promise (docs/scoring-settings.md, ``scoring.settings``): any two
executions agree per sentence within ``SCORE_ATOL + SCORE_RTOL * |score|`` and give the same
decisions except where the two compared scores are that close themselves (ties, near-ties);
the same thread count gives the same bits; ``deterministic="on"`` gives the same bits whatever
torch's thread count, and restores it afterwards. Checked with one thread, torch's default and
four, on the three fixture models and a method of each scorer family.
"""

from __future__ import annotations

import os

import pytest
import torch

from stereoset_eval.curation.loaders.crows import load_crows_pairs
from stereoset_eval.curation.loaders.stereoset_table import load_stereoset_table
from stereoset_eval.scoring.api import score_items
from stereoset_eval.scoring.settings import SCORE_ATOL, SCORE_RTOL, RunSettings, within_tolerance

N = 8
#: torch's default: one per physical core (what a user gets without OMP_NUM_THREADS)
DEFAULT_THREADS = max(1, (os.cpu_count() or 2))
COUNTS = sorted({1, DEFAULT_THREADS, 4})


@pytest.fixture(scope="module")
def jobs(models_dir, ids_csv, crows_csv):
    intra = [i for i in load_stereoset_table(ids_csv, split="dev") if i.source == "stereoset-intra"][:N]
    crows = load_crows_pairs(crows_csv)[:N]
    return [(models_dir / "tiny-bert", "stereoset-mlm", intra), (models_dir / "tiny-roberta", "pll", crows),
            (models_dir / "tiny-gpt2", "causal-ll", crows)]


def _score(model, method, items, threads: int, **settings):
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        result = score_items(items, model=str(model), method=method, use_cache=False,
                             settings=RunSettings(device="cpu", **settings))
        assert torch.get_num_threads() == threads, "the thread count was not restored"
        return result
    finally:
        torch.set_num_threads(before)


def _decisions(items, scores) -> tuple[dict, set]:
    """Per item: is its first sentence scored above its second; and the items whose two are a near-tie."""
    out, near = {}, set()
    for it in items:
        a, b = (scores[s.id] for s in it.sentences[:2])
        out[it.id] = a > b
        if abs(a - b) <= 2 * (SCORE_ATOL + SCORE_RTOL * max(abs(a), abs(b))):
            near.add(it.id)
    return out, near


def test_any_thread_count_agrees_within_the_tolerance_with_the_same_decisions(jobs):
    for model, method, items in jobs:
        runs = {n: _score(model, method, items, n).scores for n in COUNTS}
        base = runs[1]
        decisions, near = _decisions(items, base)
        for n, scores in runs.items():
            assert scores.keys() == base.keys()
            bad = {k: (base[k], scores[k]) for k in base if not within_tolerance(base[k], scores[k])}
            assert not bad, f"{method} on {n} threads: {len(bad)} scores outside the tolerance"
            other, _ = _decisions(items, scores)
            flipped = {i for i in decisions if decisions[i] != other[i]} - near
            assert not flipped, f"{method} on {n} threads: decisions differ away from a tie: {flipped}"


def test_the_same_thread_count_gives_the_same_bits(jobs):
    model, method, items = jobs[0]
    first, again = (_score(model, method, items, DEFAULT_THREADS).scores for _ in range(2))
    assert {k: repr(v) for k, v in first.items()} == {k: repr(v) for k, v in again.items()}


def test_deterministic_gives_one_thread_s_bits_whatever_torch_s_count_and_records_it(jobs):
    for model, method, items in jobs:
        one = _score(model, method, items, 1).scores
        for n in (DEFAULT_THREADS, 4):
            det = _score(model, method, items, n, deterministic="on")
            assert {k: repr(v) for k, v in det.scores.items()} == {k: repr(v) for k, v in one.items()}, (method, n)
            run = det.provenance["run"]
            assert run["torch_threads"] == 1 and run["settings"]["deterministic"] == "on"
    assert not torch.are_deterministic_algorithms_enabled()  # restored after the run


def test_deterministic_is_a_checked_setting():
    assert RunSettings().deterministic == "off"
    assert [p.field for p in RunSettings(deterministic="yes").problems()] == ["deterministic"]  # type: ignore[arg-type]
    assert RunSettings.from_dict({"deterministic": "on"}).deterministic == "on"
