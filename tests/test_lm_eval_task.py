"""The curated export's lm-evaluation-harness task, run by lm-eval itself when it is installed.

lm-eval is not a dependency (it pulls a large stack); install it beside the toolkit
(``pip install lm-eval``) and this test scores the first pairs of a real curated export with
the tiny GPT-2 fixture through ``lm_eval.simple_evaluate``, then checks that lm-eval's
per-sentence log-likelihoods equal ``causal-ll``'s on the same sentences (the convention both
follow: log p(sentence | BOS), no delimiter before the sentence).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stereoset_eval.cli.main import main

LIMIT = 12


@pytest.fixture(scope="module")
def export(tmp_path_factory, ids_csv, crows_csv) -> Path:
    out = tmp_path_factory.mktemp("lmeval") / "curated"
    assert main(["curate", "--benchmark", "stereoset", "--data", str(ids_csv), "--benchmark", "crows-pairs",
                 "--data", str(crows_csv), "--output", str(out)]) == 0
    return out


def test_lm_eval_log_likelihoods_equal_causal_ll(export: Path, models_dir: Path, tmp_path: Path) -> None:
    lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install lm-eval)")
    from lm_eval.tasks import TaskManager

    from stereoset_eval.curation.loaders.pairs_csv import load_pairs
    from stereoset_eval.scoring import score_items

    model = str(models_dir / "tiny-gpt2")
    out = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={model},dtype=float32", tasks=["stereoset_eval_curated"],
        task_manager=TaskManager(include_path=str(export / "lm_eval_task")), limit=LIMIT, log_samples=True,
        device="cpu", batch_size=1,
    )
    samples = sorted(out["samples"]["stereoset_eval_curated"], key=lambda s: s["doc_id"])
    assert len(samples) == LIMIT
    items = load_pairs(export / "pairs.parquet")[:LIMIT]
    ours = score_items(items, model=model, method="causal-ll", use_cache=False, cache_dir=tmp_path).scores
    for sample, item in zip(samples, items, strict=True):
        assert sample["doc"]["sent_more"] == item.text("sent_more")
        (ll_more, _), (ll_less, _) = (r[0] for r in sample["resps"])
        assert ll_more == pytest.approx(ours[item.sentence("sent_more").id], abs=3e-5)
        assert ll_less == pytest.approx(ours[item.sentence("sent_less").id], abs=3e-5)
    metrics = out["results"]["stereoset_eval_curated"]
    assert 0.0 <= metrics["pct_stereotype,none"] <= 1.0
