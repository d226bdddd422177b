"""Results do not depend on batching: batch size 1 vs many rows, split head vs full forward."""

from __future__ import annotations

import pytest
from conftest import float32_noise

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

CASES = [  # method, model, which items
    ("stereoset-mlm", "tiny-bert", "intra"),
    ("stereoset-mlm", "tiny-roberta", "intra"),
    ("stereoset-causal", "tiny-gpt2", "intra"),
    ("stereoset-nsp", "tiny-bert", "inter"),
    ("stereoset-inter-causal", "tiny-gpt2", "inter"),
    ("crows-nangia", "tiny-bert", "crows"),
    ("pll", "tiny-roberta", "crows"),
    ("pll-word-l2r", "tiny-bert", "crows"),
    ("causal-ll", "tiny-gpt2", "crows"),
]


@pytest.fixture(scope="module")
def subsets(stereoset_items, crows_items):
    return {
        "intra": [it for it in stereoset_items if it.task == "intrasentence"][:3],
        "inter": [it for it in stereoset_items if it.task == "intersentence"][:3],
        "crows": crows_items[1:3] + [it for it in crows_items if it.direction == "antistereo"][:1],
    }


def _score(items, models_dir, model, method, **kw):
    from stereoset_eval.scoring import score_items

    return score_items(items, model=str(models_dir / model), method=method, use_cache=False, **kw)


def _max_diff(a, b) -> float:
    """Largest difference, in units of float32 noise (``conftest.float32_noise``)."""
    assert [r.sentence_id for r in a.records] == [r.sentence_id for r in b.records]
    worst = 0.0
    for ra, rb in zip(a.records, b.records):
        pairs = [(ra.score, rb.score)] + list(zip(ra.token_logprobs or [], rb.token_logprobs or []))
        worst = max([worst] + [float32_noise(x, y) for x, y in pairs])
    return worst


@pytest.mark.parametrize("method, model, subset", CASES)
def test_batch_size_one_vs_many(method, model, subset, subsets, models_dir):
    items = subsets[subset]
    one = _score(items, models_dir, model, method, batch_tokens=1)  # one row per forward pass
    many = _score(items, models_dir, model, method, batch_tokens=64 * 128)  # up to 64 rows of 128 tokens
    assert len(one.records) == sum(len(it.sentences) for it in items)
    assert _max_diff(one, many) <= 1e-5


@pytest.mark.parametrize("method, model, subset", [c for c in CASES if c[0] != "stereoset-nsp"])
def test_split_head_equals_full_forward(method, model, subset, subsets, models_dir, monkeypatch):
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.methods import get_method

    split = _score(subsets[subset], models_dir, model, method)
    backend = load_backend(str(models_dir / model), kind=get_method(method).model_kind)
    assert split.provenance["model"]["head_split"] and backend.head is not None
    monkeypatch.setattr(backend, "head", None)  # scorers fall back to the full forward pass
    monkeypatch.setattr(backend, "base", None)
    full = _score(subsets[subset], models_dir, model, method)
    assert _max_diff(split, full) <= 1e-5


def test_gpu_overhead_merges_lengths_into_fewer_batches(crows_items, models_dir):
    """With a GPU's fixed cost per forward pass (1,024 tokens) the planner pads more and runs fewer
    passes than with the CPU's (64); every row is still scored exactly once, under the budget."""
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.methods import get_method
    from stereoset_eval.scoring.requests import batch_overhead_tokens, merge_requests, padded_cost, plan_batches

    spec = get_method("crows-nangia")
    tok = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu").tokenizer
    options = spec.resolve(tok, spec.validate_options(None))
    rows = merge_requests(r for u in spec.units(crows_items[:60], options) for r in spec.prepare(u, tok, options).requests)
    plans = {dev: plan_batches(rows, 8192, overhead_tokens=batch_overhead_tokens(dev)) for dev in ("cpu", "cuda")}
    for plan in plans.values():
        assert sorted(r.key for b in plan for r in b) == sorted(r.key for r in rows)
        assert all(padded_cost(len(b), max(len(r.input_ids) for r in b)) <= 8192 for b in plan)
    assert len(plans["cuda"]) < len(plans["cpu"]) / 2, (len(plans["cuda"]), len(plans["cpu"]))


def test_a_narrow_model_runs_each_commit_group_as_one_batch(crows_items, models_dir, monkeypatch):
    """A run of a narrow model (hidden size 64: a pass's fixed cost is ~9,000 tokens' work) runs fewer,
    fuller batches than the same units at BERT-base's width, scores every row once, records the
    overhead it planned with, and gives the same numbers up to float32 batch noise. On the CPU, whatever
    the machine has: the overhead is the CPU's (on CUDA a pass's fixed cost is another)."""
    from stereoset_eval.scoring import api, score_items
    from stereoset_eval.scoring.requests import batch_overhead_tokens

    model = str(models_dir / "tiny-bert")
    narrow = score_items(crows_items[:80], model=model, method="crows-nangia", use_cache=False, device="cpu")
    assert narrow.provenance["run"]["batch_overhead_tokens"] == batch_overhead_tokens("cpu", 64) == 9216
    monkeypatch.setattr(api, "batch_overhead_tokens", lambda device, width=None: batch_overhead_tokens(device))
    wide = score_items(crows_items[:80], model=model, method="crows-nangia", use_cache=False,
                       device="cpu")  # as at BERT-base width
    assert wide.provenance["run"]["batch_overhead_tokens"] == 64
    n, w = narrow.provenance["run"]["execution"], wide.provenance["run"]["execution"]
    assert n["rows_computed"] == w["rows_computed"] and n["batches"] < w["batches"] * 0.75, (n, w)
    for a, b in zip(narrow.records, wide.records):
        assert a.sentence_id == b.sentence_id and abs(a.extra["unrounded"] - b.extra["unrounded"]) < 1e-4


def test_model_width_is_read_from_the_config(models_dir):
    from stereoset_eval.scoring.api import model_width
    from stereoset_eval.scoring.backends import load_backend

    assert model_width(load_backend(str(models_dir / "tiny-gpt2"), kind="causal", device="cpu")) == 64  # n_embd
    assert model_width(object()) is None


def test_young_collection_only_after_enough_allocations(monkeypatch):
    """During a run the collector is paused; a young pass runs once enough objects were made, not per group."""
    import gc

    from stereoset_eval.scoring import engine

    passes = []
    monkeypatch.setattr(engine.gc, "collect", lambda generation=2: passes.append(generation))
    counts = iter([(10, 0, 0), (engine.YOUNG_OBJECTS_PER_PASS, 0, 0)])
    monkeypatch.setattr(engine.gc, "get_count", lambda: next(counts))
    engine._collect_young()
    assert passes == []
    engine._collect_young()
    assert passes == [1]
    with engine.collector_paused():
        assert not gc.isenabled()
