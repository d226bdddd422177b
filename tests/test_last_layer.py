"""The last encoder layer at the scored positions only (stereoset_eval.scoring.last_layer): same numbers, guarded by its probe."""

from __future__ import annotations

import pytest
from conftest import float32_noise

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

MASKED = ["tiny-bert", "tiny-roberta"]


def _padded_batch(tokenizer, texts, device="cpu"):
    import torch

    encoded = [tokenizer.encode(t) for t in texts]
    width = max(len(e) for e in encoded)
    pad = tokenizer.pad_token_id
    ids = torch.tensor([e + [pad] * (width - len(e)) for e in encoded], device=device)
    mask = torch.tensor([[1] * len(e) + [0] * (width - len(e)) for e in encoded], device=device)
    return {"input_ids": ids, "attention_mask": mask}, [len(e) for e in encoded]


@pytest.mark.parametrize("model", MASKED)
@pytest.mark.parametrize("attn", ["sdpa", "eager"])
def test_hidden_at_equals_full_pass_with_padding_and_several_positions(model, attn, models_dir):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from stereoset_eval.scoring.last_layer import probe_last_layer

    path = str(models_dir / model)
    tok = AutoTokenizer.from_pretrained(path)
    net = AutoModelForMaskedLM.from_pretrained(path, attn_implementation=attn).eval()
    hidden_at = probe_last_layer(net.base_model, tok, torch.device("cpu"), torch.float32)
    assert hidden_at is not None
    inputs, lengths = _padded_batch(tok, ["The nurse said she was tired after the long shift.", "He cried.",
                                          "Poor people are lazy."])
    # row 1 twice, row 0 three times, out of order; every real position of row 2
    rows = [1, 0, 0, 1, 0] + [2] * lengths[2]
    positions = [1, lengths[0] - 1, 3, lengths[1] - 1, 0] + list(range(lengths[2]))
    rows_t, pos_t = torch.tensor(rows), torch.tensor(positions)
    with torch.inference_mode():
        want = net.base_model(**inputs).last_hidden_state[rows_t, pos_t]
        got = hidden_at(inputs, rows_t, pos_t)
        one_each = hidden_at(inputs, torch.arange(3), torch.tensor([2, 1, 0]))
        want_one_each = net.base_model(**inputs).last_hidden_state[torch.arange(3), torch.tensor([2, 1, 0])]
    assert got.shape == want.shape
    assert float((got - want).abs().max()) <= 1e-5
    assert float((one_each - want_one_each).abs().max()) <= 1e-5
    assert not net.base_model.encoder.layer[-1]._forward_pre_hooks  # the capture hook is removed again


def test_probe_refuses_a_last_layer_it_would_compute_differently(models_dir):
    """A layer whose attention block does more than self-attention + output (here: doubles it) fails the probe."""
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from stereoset_eval.scoring.last_layer import probe_last_layer

    path = str(models_dir / "tiny-bert")
    tok = AutoTokenizer.from_pretrained(path)
    net = AutoModelForMaskedLM.from_pretrained(path).eval()
    attention = net.base_model.encoder.layer[-1].attention
    plain = attention.forward
    attention.forward = lambda *a, **k: (lambda out: (out[0] * 2.0,) + tuple(out[1:]))(plain(*a, **k))
    assert probe_last_layer(net.base_model, tok, torch.device("cpu"), torch.float32) is None


def test_probe_refuses_models_without_a_bert_like_encoder(models_dir):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from stereoset_eval.scoring.last_layer import probe_last_layer

    path = str(models_dir / "tiny-gpt2")
    net = AutoModelForCausalLM.from_pretrained(path).eval()
    assert probe_last_layer(net.base_model, AutoTokenizer.from_pretrained(path), torch.device("cpu"),
                            torch.float32) is None


@pytest.mark.parametrize("method, model", [("pll", "tiny-roberta"), ("pll-word-l2r", "tiny-bert"),
                                           ("crows-nangia", "tiny-bert"), ("stereoset-mlm", "tiny-roberta")])
def test_scores_equal_either_way_and_provenance_says_which(method, model, models_dir, crows_items, stereoset_items):
    from stereoset_eval.scoring import score_items

    items = ([it for it in stereoset_items if it.task == "intrasentence"][:4] if method == "stereoset-mlm"
             else crows_items[:4])
    kw = dict(model=str(models_dir / model), method=method, use_cache=False)
    scored = score_items(items, last_layer="scored", **kw)
    full = score_items(items, last_layer="all", **kw)
    assert scored.provenance["run"]["last_layer"] == "scored positions"
    assert full.provenance["run"]["last_layer"] == "all positions"
    assert scored.provenance["model"]["last_layer_at_scored_positions"] is True
    assert [r.sentence_id for r in scored.records] == [r.sentence_id for r in full.records]
    worst = max(float32_noise(a.score, b.score) for a, b in zip(scored.records, full.records))
    assert worst <= 1e-5


def test_causal_models_run_every_position(models_dir, crows_items):
    from stereoset_eval.scoring import score_items

    run = score_items(crows_items[:2], model=str(models_dir / "tiny-gpt2"), method="causal-ll", use_cache=False)
    assert run.provenance["run"]["last_layer"] == "all positions"
    assert run.provenance["model"]["last_layer_at_scored_positions"] is False


def test_unknown_last_layer_value_is_an_error(models_dir, crows_items):
    from stereoset_eval.scoring import score_items
    from stereoset_eval.scoring.records import ScoringError

    with pytest.raises(ScoringError, match="last_layer must be one of scored, all"):
        score_items(crows_items[:1], model=str(models_dir / "tiny-bert"), method="pll", last_layer="some",
                    use_cache=False)
