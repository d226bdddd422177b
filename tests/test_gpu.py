"""CUDA paths: every method on the GPU agrees with the CPU; bf16 / fp16 run, are recorded and stay close.

Skipped where torch sees no CUDA device (CI has none). The golden conformance and batch-invariance
suites (``test_scoring_goldens.py``, ``test_scoring_batching.py``) use ``device="auto"``, so on a
GPU machine they run on CUDA too; this file adds what they cannot show: CPU vs CUDA on the same
inputs, the reduced-precision dtypes (CUDA-only for fp16), and GPU memory staying bounded.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

# (model, method, dataset): every scoring method, each on a fixture model of its kind
CASES = [
    ("tiny-bert", "crows-nangia", "crows"),
    ("tiny-roberta", "crows-nangia", "crows"),
    ("tiny-bert", "pll", "crows"),
    ("tiny-bert", "pll-word-l2r", "crows"),
    ("tiny-bert", "stereoset-mlm", "intra"),
    ("tiny-roberta", "stereoset-mlm", "intra"),
    ("tiny-bert", "stereoset-nsp", "inter"),
    ("tiny-gpt2", "stereoset-causal", "intra"),
    ("tiny-gpt2", "stereoset-inter-causal", "inter"),
    ("tiny-gpt2", "causal-ll", "crows"),
]


@pytest.fixture(scope="module")
def items(crows_items, stereoset_items) -> dict[str, list]:
    return {"crows": list(crows_items[:80]),
            "intra": [it for it in stereoset_items if it.task == "intrasentence"][:60],
            "inter": [it for it in stereoset_items if it.task == "intersentence"][:40]}


def _score(items_, models_dir: Path, model: str, method: str, **kw):
    from stereoset_eval.scoring import score_items

    return score_items(items_, model=str(models_dir / model), method=method, use_cache=False, **kw)


def _values(result) -> dict[str, float]:
    # crows-nangia rounds to 3 decimals (metric.py); compare before the rounding
    return {r.sentence_id: float(r.extra.get("unrounded", r.score)) for r in result.records}


@pytest.mark.parametrize(("model", "method", "dataset"), CASES, ids=[f"{m}-{meth}" for m, meth, _ in CASES])
def test_cuda_fp32_agrees_with_cpu(items, models_dir: Path, model: str, method: str, dataset: str) -> None:
    cpu = _score(items[dataset], models_dir, model, method, device="cpu")
    gpu = _score(items[dataset], models_dir, model, method, device="cuda")
    assert gpu.provenance["model"]["device"].startswith("cuda")
    a, b = _values(cpu), _values(gpu)
    assert set(a) == set(b) and a
    worst = max(abs(a[k] - b[k]) / max(1.0, abs(a[k])) for k in a)
    assert worst <= 1e-5, f"{method} on {model}: CPU vs CUDA differ by {worst:.2e} (relative)"


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize(("model", "method", "dataset"), [("tiny-bert", "pll", "crows"),
                                                          ("tiny-gpt2", "causal-ll", "crows")])
def test_reduced_precision_runs_is_recorded_and_stays_close(items, models_dir: Path, model: str, method: str,
                                                            dataset: str, dtype: str) -> None:
    ref = _values(_score(items[dataset], models_dir, model, method, device="cuda"))
    low = _score(items[dataset], models_dir, model, method, device="cuda", dtype=dtype)
    assert low.provenance["model"]["dtype"] == {"bf16": "bfloat16", "fp16": "float16"}[dtype]
    got = _values(low)
    assert set(got) == set(ref) and all(math.isfinite(v) for v in got.values())
    rel = sorted(abs(got[k] - ref[k]) / abs(ref[k]) for k in ref if ref[k])
    median = rel[len(rel) // 2]
    # bf16 keeps 8 mantissa bits (~0.4 % per rounding), fp16 11; a wrong token or position is far off
    assert median <= (3e-2 if dtype == "bf16" else 5e-3), f"{dtype}: median relative difference {median:.2e}"
    pairs = [(ref[k], got[k]) for k in ref]
    concordant = sum(1 for i in range(0, len(pairs) - 1, 2)
                     if (pairs[i][0] - pairs[i + 1][0]) * (pairs[i][1] - pairs[i + 1][1]) > 0)
    assert concordant >= 0.9 * (len(pairs) // 2)  # pair orderings (more vs less) mostly survive


def test_reduced_precision_is_a_separate_cache_entry(items, models_dir: Path, tmp_path: Path) -> None:
    from stereoset_eval.scoring import score_items

    kw = dict(model=str(models_dir / "tiny-bert"), method="pll", device="cuda", cache_dir=tmp_path)
    score_items(items["crows"][:5], **kw)
    again = score_items(items["crows"][:5], dtype="bf16", **kw)
    assert again.cache_stats["hits"] == 0  # fp32 results are never served for bf16


def test_gpu_memory_is_bounded_by_the_batch_budget(items, models_dir: Path) -> None:
    """Peak GPU memory follows batch_tokens, not the number of sentences."""
    peaks = []
    for n in (20, 80):
        torch.cuda.reset_peak_memory_stats()
        _score(items["crows"][:n], models_dir, "tiny-bert", "pll", device="cuda", batch_tokens=2048)
        peaks.append(torch.cuda.max_memory_allocated())
    assert peaks[1] <= peaks[0] * 1.5 + 8 * 2**20, peaks


def test_tf32_switched_on_by_the_user_does_not_change_fp32_scores(items, models_dir: Path) -> None:
    before = _values(_score(items["crows"][:20], models_dir, "tiny-bert", "pll", device="cuda"))
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        after = _values(_score(items["crows"][:20], models_dir, "tiny-bert", "pll", device="cuda"))
        assert torch.backends.cuda.matmul.allow_tf32 is True  # restored after scoring
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    assert max(abs(before[k] - after[k]) for k in before) <= 1e-5


@pytest.mark.parametrize("method", ["pll", "stereoset-mlm"])
def test_cuda_runs_overlap_groups_and_match_a_sequential_cuda_run(items, models_dir: Path, method: str,
                                                                 monkeypatch) -> None:
    """On CUDA the engine overlaps commit groups (``run.execution.overlap``); the same batches run
    as without it, so the values equal a sequential CUDA run's (forced here) bit for bit."""
    from stereoset_eval.scoring.scorers import Scorer

    data = items["crows" if method == "pll" else "intra"]
    overlapped = _score(data, models_dir, "tiny-bert", method, device="cuda", batch_tokens=1024)
    assert overlapped.provenance["run"]["execution"]["overlap"] is True
    assert overlapped.provenance["run"]["execution"]["batches"] > 2
    monkeypatch.setattr(Scorer, "asynchronous", False)
    sequential = _score(data, models_dir, "tiny-bert", method, device="cuda", batch_tokens=1024)
    assert sequential.provenance["run"]["execution"]["overlap"] is False
    assert _values(overlapped) == _values(sequential)


def test_one_pinned_transfer_gives_every_array_of_every_batch() -> None:
    """Many batches in a row through pinned staging buffers (reused by the caching host allocator
    while earlier copies may still run): every array arrives equal to the host's."""
    import numpy as np

    from stereoset_eval.scoring.scorers import one_transfer

    rng = np.random.default_rng(1)
    sent, got = [], []
    for _ in range(200):
        rows, width = int(rng.integers(1, 64)), int(rng.integers(1, 40))
        arrays = [rng.integers(0, 50_000, size=(rows, width), dtype=np.int64),
                  rng.integers(0, 2, size=(rows, width), dtype=np.int64),
                  rng.integers(0, width, size=rows, dtype=np.int64)]
        sent.append([a.copy() for a in arrays])
        got.append(one_transfer(torch, arrays, torch.device("cuda"), pin=True))
    torch.cuda.synchronize()
    for host, device in zip(sent, got):
        assert all(t.is_cuda and np.array_equal(t.cpu().numpy(), a) for a, t in zip(host, device))
