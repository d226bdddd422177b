"""Work shared across the methods of a run, and the out-of-memory fallback.

* One :class:`~stereoset_eval.scoring.shared_work.SharedWork` over ``pll``, ``pll-word-l2r`` and
  ``crows-nangia`` (the BMNE protocol's masked-LM methods) gives the numbers of each method run
  alone (float32 batch noise), and runs each distinct masked input once: counted from the
  forward rows each call reports in ``run.execution``, against counts derived here from the
  methods' own requests.
* An out-of-memory error halves the batch and retries (recorded in ``run.execution``); the
  fake OOM is injected into the scorer, so the test fails if the engine does not catch it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import float32_noise

METHODS = ("pll", "pll-word-l2r", "crows-nangia")
N_PAIRS = 60


def _score(items, model: Path, method: str, shared=None, **kw):
    from stereoset_eval.scoring.api import score_items
    from stereoset_eval.scoring.settings import RunSettings

    settings = RunSettings(share_masked_inputs="on") if shared is not None else None
    return score_items(items, model=str(model), method=method, device="cpu", use_cache=False, shared=shared,
                       settings=settings, **kw)


def _comparable(score_set) -> dict[str, float]:
    if score_set.method == "crows-nangia":
        return {r.sentence_id: r.extra["unrounded"] for r in score_set.records}
    return {r.sentence_id: r.score for r in score_set.records}


def _distinct_inputs(items, model: Path, method: str) -> set:
    """The distinct (masked input, position, target) triples ``method`` needs, from its own requests."""
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.methods import get_method

    spec = get_method(method)
    backend = load_backend(str(model), kind=spec.model_kind, device="cpu")
    options = spec.resolve(backend.tokenizer, spec.validate_options(None))
    return {(r.key, g) for u in spec.units(items, options)
            for r in spec.prepare(u, backend.tokenizer, options).requests for g in r.gather}


@pytest.mark.parametrize("model_name", ["tiny-bert", "tiny-roberta"])
def test_methods_sharing_a_run_equal_each_method_alone_and_run_each_input_once(model_name, models_dir, crows_items):
    from stereoset_eval.scoring.shared_work import SharedWork

    model = models_dir / model_name
    items = crows_items[:N_PAIRS]
    alone = {m: _score(items, model, m) for m in METHODS}
    shared = SharedWork()
    together = {m: _score(items, model, m, shared=shared) for m in METHODS}

    for m in METHODS:
        a, b = _comparable(alone[m]), _comparable(together[m])
        assert a.keys() == b.keys()
        worst = max(float32_noise(a[k], b[k]) for k in a)
        assert worst <= 1e-5, f"{m}: shared run differs from the method alone by {worst}"

    rows = {m: together[m].provenance["run"]["execution"] for m in METHODS}
    rows_alone = {m: alone[m].provenance["run"]["execution"]["rows_computed"] for m in METHODS}
    # pll runs first: nothing to reuse yet, so it runs what it runs alone
    assert rows["pll"]["rows_computed"] == rows_alone["pll"] and rows["pll"]["rows_reused"] == 0
    # every crows-nangia masked copy is the pll masked copy of the same token: nothing left to run
    crows, pll, l2r = (_distinct_inputs(items, model, m) for m in ("crows-nangia", "pll", "pll-word-l2r"))
    assert crows <= pll
    assert rows["crows-nangia"]["rows_computed"] == 0
    assert rows["crows-nangia"]["rows_reused"] == rows_alone["crows-nangia"] > 0
    # pll-word-l2r runs only its copies with later pieces of the same word masked too
    new_inputs = {key for key, _ in l2r - pll}
    assert 0 < len(new_inputs) < rows_alone["pll-word-l2r"]
    assert rows["pll-word-l2r"]["rows_computed"] == len(new_inputs)
    # its few new rows per commit group run together, not in one small batch per group
    assert rows["pll-word-l2r"]["batches"] * 2 <= alone["pll-word-l2r"].provenance["run"]["execution"]["batches"]
    assert shared.rows_computed == rows_alone["pll"] + len(new_inputs)
    assert shared.rows_computed < sum(rows_alone.values())


def test_shared_values_are_kept_per_model_and_scorer_path(models_dir, crows_items):
    """Another model, or the other last-layer path, never reads the first one's values."""
    from stereoset_eval.scoring.shared_work import SharedWork

    items = crows_items[:5]
    shared = SharedWork()
    _score(items, models_dir / "tiny-bert", "pll", shared=shared)
    other_path = _score(items, models_dir / "tiny-bert", "pll", shared=shared, last_layer="all")
    assert other_path.provenance["run"]["execution"]["rows_reused"] == 0
    again = _score(items, models_dir / "tiny-bert", "pll", shared=shared, last_layer="all")
    assert again.provenance["run"]["execution"]["rows_computed"] == 0


def test_each_text_is_encoded_once_per_run(models_dir, crows_items, count_encoded):
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.shared_work import SharedWork

    model = models_dir / "tiny-bert"
    items = crows_items[:20]
    backend = load_backend(str(model), kind="masked", device="cpu")
    calls = count_encoded(backend.tokenizer)
    shared = SharedWork()
    for m in METHODS:
        _score(items, model, m, shared=shared)
    assert calls, "the tokenizer was never called"
    assert len(calls) == len(set(calls)), "a text was encoded twice in one run"


def _oom_error():
    import torch

    return getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError


def test_out_of_memory_halves_the_batch_and_retries(models_dir, crows_items, monkeypatch):
    from stereoset_eval.scoring import scorers

    model = models_dir / "tiny-bert"
    items = crows_items[:10]
    plain = _score(items, model, "pll")
    assert plain.provenance["run"]["execution"]["oom_halvings"] == []
    real_launch = scorers.Scorer.launch
    refused: list[int] = []
    ran: list[int] = []

    def run_or_oom(self, rows):  # "the device" holds at most 8 rows
        if len(rows) > 8:
            refused.append(len(rows))
            raise _oom_error()("CUDA out of memory. Tried to allocate 2.00 GiB (injected)")
        ran.append(len(rows))
        return real_launch(self, rows)

    monkeypatch.setattr(scorers.Scorer, "launch", run_or_oom)
    halved = _score(items, model, "pll")
    halvings = halved.provenance["run"]["execution"]["oom_halvings"]
    assert halvings and all(after == (before + 1) // 2 for before, after in halvings)
    assert refused and [before for before, _ in halvings] == refused  # every refusal was halved, and recorded
    assert sum(ran) == plain.provenance["run"]["execution"]["rows_computed"]  # every row ran once, in batches <= 8
    a, b = _comparable(plain), _comparable(halved)
    assert max(float32_noise(a[k], b[k]) for k in a) <= 1e-5


def test_out_of_memory_on_a_single_row_is_raised(models_dir, crows_items, monkeypatch):
    from stereoset_eval.scoring import scorers

    def always_oom(self, rows):
        raise _oom_error()("out of memory (injected)")

    monkeypatch.setattr(scorers.Scorer, "launch", always_oom)
    with pytest.raises(_oom_error()):
        _score(crows_items[:2], models_dir / "tiny-bert", "pll")


def test_sharing_is_off_by_default_so_each_method_is_bit_identical_to_its_run_alone(models_dir, crows_items):
    """``share_masked_inputs`` off (the default): a run's SharedWork memoizes encodings only; no
    masked input is read from another method, so every number equals the method run alone exactly."""
    from stereoset_eval.scoring.api import score_items
    from stereoset_eval.scoring.shared_work import SharedWork

    model = models_dir / "tiny-bert"
    items = crows_items[:N_PAIRS]
    alone = {m: _comparable(_score(items, model, m)) for m in METHODS}
    shared = SharedWork()
    together = {m: _comparable(score_items(items, model=str(model), method=m, device="cpu", use_cache=False,
                                           shared=shared)) for m in METHODS}
    assert shared.rows_reused == 0 and shared.rows_computed > 0
    assert together == alone
