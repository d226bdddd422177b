"""The head runs over the gathered positions in chunks of ``HEAD_CHUNK`` (``scoring.scorers``): a
batch with more scored positions gives the same log-probabilities as one head application, whether
its gathers' pairs never decrease (slices per chunk) or do (selection masks per chunk)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import stereoset_eval.scoring.scorers as scorers  # noqa: E402
from stereoset_eval.scoring.api import score_items  # noqa: E402
from stereoset_eval.scoring.backends import load_backend  # noqa: E402


def _gathered(scorer: scorers.Scorer, ids: np.ndarray, pair_rows: np.ndarray, pair_pos: np.ndarray,
              g_pair: np.ndarray, g_target: np.ndarray) -> np.ndarray:
    with torch.inference_mode():
        return scorer._gathered({"input_ids": ids}, pair_rows, pair_pos, g_pair, g_target, len(pair_rows),
                                False).numpy()


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_chunks_give_the_values_of_one_head_application(models_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                        chunk: int) -> None:
    backend = load_backend(str(models_dir / "tiny-gpt2"), kind="causal", device="cpu")
    scorer = scorers.Scorer(backend)
    rng = np.random.default_rng(chunk)
    ids = rng.integers(5, 1000, size=(3, 6), dtype=np.int64)
    pair_rows = np.repeat(np.arange(3, dtype=np.int64), 6)
    pair_pos = np.tile(np.arange(6, dtype=np.int64), 3)
    sorted_pairs = np.sort(rng.integers(0, 18, size=40)).astype(np.int64)  # pairs never decrease: slices
    shuffled = rng.permutation(sorted_pairs).astype(np.int64)  # they do: selection masks
    targets = rng.integers(0, 2000, size=40, dtype=np.int64)
    assert scorers._chunk_cuts(sorted_pairs, [0, 18]) is not None and scorers._chunk_cuts(shuffled, [0, 18]) is None
    whole = {name: _gathered(scorer, ids, pair_rows, pair_pos, g, targets)
             for name, g in (("sorted", sorted_pairs), ("shuffled", shuffled))}
    monkeypatch.setattr(scorers, "HEAD_CHUNK", chunk)
    for name, g in (("sorted", sorted_pairs), ("shuffled", shuffled)):
        np.testing.assert_allclose(_gathered(scorer, ids, pair_rows, pair_pos, g, targets), whole[name],
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    # the log-probabilities are those of log_softmax over the vocabulary at each pair
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.from_numpy(ids)).logits.float()
    expected = torch.log_softmax(logits[pair_rows[sorted_pairs], pair_pos[sorted_pairs]], dim=-1)
    np.testing.assert_allclose(whole["sorted"], expected[np.arange(40), targets].numpy(), rtol=1e-5, atol=1e-5)


def test_a_run_with_small_chunks_scores_as_the_default(models_dir: Path, stereoset_items,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    items = [i for i in stereoset_items if i.source == "stereoset-intra"][:12]
    model = str(models_dir / "tiny-gpt2")
    default = score_items(items, model=model, method="stereoset-causal", use_cache=False).scores
    monkeypatch.setattr(scorers, "HEAD_CHUNK", 5)
    small = score_items(items, model=model, method="stereoset-causal", use_cache=False).scores
    assert list(small) == list(default)
    np.testing.assert_allclose(list(small.values()), list(default.values()), rtol=1e-5)
