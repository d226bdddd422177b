"""Model loading: kinds, weights hash, limits, device/dtype choices, refusing random heads."""

from __future__ import annotations

import re

import pytest

from stereoset_eval.scoring.records import ScoringError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _provenance_sha(shared_dir, model: str) -> str:
    text = (shared_dir / "fixtures" / "PROVENANCE.md").read_text(encoding="utf-8")
    return re.search(rf"`models/{model}/model.safetensors` \| [\d,]+ \| `([0-9a-f]{{64}})`", text).group(1)


@pytest.mark.parametrize("model, kind, cls, max_len", [
    ("tiny-bert", "masked", "BertForMaskedLM", 128),
    ("tiny-bert", "nsp", "BertForNextSentencePrediction", 128),
    ("tiny-roberta", "masked", "RobertaForMaskedLM", 128),  # 130 positions minus RoBERTa's padding offset
    ("tiny-gpt2", "causal", "GPT2LMHeadModel", 128),
])
def test_fixture_backends(model, kind, cls, max_len, models_dir, shared_dir):
    from stereoset_eval.scoring.backends import load_backend

    b = load_backend(str(models_dir / model), kind=kind, device="cpu")
    assert b.info["model_class"] == cls and b.tokenizer.max_length == max_len
    assert b.info["weight_files"]["model.safetensors"] == _provenance_sha(shared_dir, model)
    assert b.model.training is False and str(b.dtype) == "torch.float32"
    assert (b.head is not None) == (kind != "nsp")


def test_checkpoint_with_both_heads_reports_the_unused_one(models_dir):
    from stereoset_eval.scoring.backends import load_backend

    b = load_backend(str(models_dir / "tiny-bert"), kind="masked")
    assert "cls.seq_relationship.weight" in b.info["load_report"]["unexpected_keys"]


def test_model_kinds_are_read_from_the_config(models_dir):
    from stereoset_eval.scoring.backends import model_kinds_available

    assert model_kinds_available(str(models_dir / "tiny-bert")) == {"masked": True, "causal": False, "nsp": True}
    assert model_kinds_available(str(models_dir / "tiny-roberta")) == {"masked": True, "causal": False, "nsp": False}
    assert model_kinds_available(str(models_dir / "tiny-gpt2")) == {"masked": False, "causal": True, "nsp": False}


def test_a_missing_nsp_head_is_refused_not_randomly_initialised(models_dir, tmp_path):
    import shutil

    from transformers import BertForMaskedLM

    from stereoset_eval.scoring.backends import load_backend

    d = tmp_path / "bert-mlm-only"
    BertForMaskedLM.from_pretrained(str(models_dir / "tiny-bert")).save_pretrained(d)
    for f in ("tokenizer.json", "tokenizer_config.json", "vocab.txt"):
        shutil.copy(models_dir / "tiny-bert" / f, d)
    with pytest.raises(ScoringError, match="no pretrained weights|at random"):
        load_backend(str(d), kind="nsp")


@pytest.mark.parametrize("device, dtype, message", [
    ("tpu", None, "unknown device"),
    ("cpu", "fp16", "not supported on CPU"),
    ("cpu", "int8", "unknown dtype"),
])
def test_bad_device_or_dtype(device, dtype, message, models_dir):
    from stereoset_eval.scoring.backends import load_backend

    with pytest.raises(ScoringError, match=message):
        load_backend(str(models_dir / "tiny-bert"), kind="masked", device=device, dtype=dtype)


def test_dtype_is_recorded_and_keys_the_cache(crows_items, models_dir, tmp_path):
    from stereoset_eval.scoring import score_items

    kw = dict(model=str(models_dir / "tiny-bert"), method="pll", cache_dir=tmp_path)
    fp32 = score_items(crows_items[:2], **kw)
    bf16 = score_items(crows_items[:2], dtype="bf16", **kw)
    assert bf16.provenance["model"]["dtype"] == "bfloat16" and bf16.cache_stats["hits"] == 0
    assert fp32.scores != bf16.scores
    assert max(abs(fp32.scores[k] - bf16.scores[k]) for k in fp32.scores) < 1.0


def test_tokenizer_facts_are_probed(models_dir):
    from stereoset_eval.scoring.backends import load_backend

    bert = load_backend(str(models_dir / "tiny-bert"), kind="masked").tokenizer
    roberta = load_backend(str(models_dir / "tiny-roberta"), kind="masked").tokenizer
    gpt2 = load_backend(str(models_dir / "tiny-gpt2"), kind="causal").tokenizer
    assert (bert.lowercases, bert.byte_level) == (True, False)
    assert (roberta.lowercases, roberta.byte_level) == (False, True)
    assert (gpt2.lowercases, gpt2.byte_level) == (False, True)
    assert gpt2.start_token_id(method="x") == 0 and gpt2.special_id("pad") is None


def test_nsp_head_found_from_weights_when_config_lists_only_masked_lm(models_dir, tmp_path):
    """Like bert-base-uncased: config says BertForMaskedLM, the checkpoint holds the NSP head."""
    import json
    import shutil

    from stereoset_eval.scoring.backends import checkpoint_weight_names, model_kinds_available

    copy = tmp_path / "bert-masked-config"
    shutil.copytree(models_dir / "tiny-bert", copy)
    config = json.loads((copy / "config.json").read_text())
    config["architectures"] = ["BertForMaskedLM"]
    (copy / "config.json").write_text(json.dumps(config))
    assert "cls.seq_relationship.weight" in checkpoint_weight_names(str(copy))
    assert model_kinds_available(str(copy))["nsp"] is True
    assert model_kinds_available(str(models_dir / "tiny-roberta"))["nsp"] is False
    assert model_kinds_available(str(models_dir / "tiny-gpt2"))["nsp"] is False


def test_exact_float32_turns_tf32_off_for_cuda_fp32_only_and_restores_it() -> None:
    """The guard score_items runs under: checked here without a GPU (the flags exist in CPU builds)."""
    from types import SimpleNamespace

    import torch

    from stereoset_eval.scoring.backends import exact_float32

    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        with exact_float32(SimpleNamespace(device=torch.device("cuda"), dtype=torch.float32)):
            assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (False, False)
        assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == (True, True)
        for device, dtype in (("cuda", torch.bfloat16), ("cpu", torch.float32)):
            with exact_float32(SimpleNamespace(device=torch.device(device), dtype=dtype)):
                assert torch.backends.cuda.matmul.allow_tf32 is True  # untouched: bf16 chosen, or not CUDA
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def test_one_rule_for_the_model_kind(models_dir, tmp_path):
    """score, the study planner and the loader's checks all ask scoring.model_info.detect_model_kind."""
    import shutil

    from stereoset_eval.scoring.model_info import detect_model_kind
    from stereoset_eval.scoring.records import ScoringError
    from stereoset_eval.study.config import ModelSpec
    from stereoset_eval.study.plan import PlanError, model_kind

    for name, kind in (("tiny-bert", "masked"), ("tiny-roberta", "masked"), ("tiny-gpt2", "causal")):
        assert detect_model_kind(str(models_dir / name)) == kind
        assert model_kind(ModelSpec(str(models_dir / name), name)) == kind
    t5 = tmp_path / "t5"
    shutil.copytree(models_dir / "tiny-gpt2", t5)
    (t5 / "config.json").write_text('{"architectures": ["T5ForConditionalGeneration"], "model_type": "t5"}',
                                    encoding="utf-8")
    with pytest.raises(ScoringError, match="cannot tell a masked from a causal language model"):
        detect_model_kind(str(t5))
    with pytest.raises(PlanError, match=r"cannot tell a masked from a causal .*set `kind"):
        model_kind(ModelSpec(str(t5), "t5"))
