"""Batched methods vs literal, unbatched transcriptions of the reference loops, on every fixture model.

The goldens cover tiny-bert and tiny-gpt2; these transcriptions (one forward pass per input,
exactly as the reference code builds it) extend the check to tiny-roberta (byte-level BPE,
``<mask>`` with lstrip, cased) and to ``causal-ll``, which has no golden, so model-family
behaviour is tested generically rather than special-cased.
"""

from __future__ import annotations

import contextlib
import difflib
import string

import pytest

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

N_ITEMS = 5


def _load(models_dir, name, cls_name):
    import transformers

    path = str(models_dir / name)
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = getattr(transformers, cls_name).from_pretrained(path).eval()
    return tok, model


@pytest.fixture(autouse=True)
def one_thread_for_transcriptions():
    """The transcriptions run thousands of one-row forward passes; a single torch thread keeps
    them fast on a shared machine (OpenMP barriers stall when a second core is busy). Our
    batched scorer runs inside ``_score`` with the default thread count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@contextlib.contextmanager
def _default_threads():
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(_DEFAULT_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _torch_default_threads() -> int:
    import torch

    return torch.get_num_threads()


_DEFAULT_THREADS = _torch_default_threads()


def _score(items, models_dir, model, method, **kw):
    from stereoset_eval.scoring import score_items

    with _default_threads():
        return score_items(items, model=str(models_dir / model), method=method, use_cache=False, **kw)


# --- transcriptions ------------------------------------------------------------------------------

def ref_stereoset_mlm(tok, model, context, sentence, leading_space):
    """eval_discriminative_models.evaluate_intrasentence + IntrasentenceLoader (bias-bench variant)."""
    import torch

    word_idx = [i for i, w in enumerate(context.split(" ")) if "BLANK" in w][-1]
    word = sentence.split(" ")[word_idx].translate(str.maketrans("", "", string.punctuation))
    ids = tok.encode(f" {word}" if leading_space else word, add_special_tokens=False)
    probs = []
    for i in range(len(ids)):
        text = context.replace("BLANK", f"{tok.decode(ids[:i])}{tok.mask_token}")
        enc = tok(text, return_token_type_ids=True)
        with torch.no_grad():
            out = model(torch.tensor([enc["input_ids"]]), attention_mask=torch.tensor([enc["attention_mask"]]),
                        token_type_ids=torch.tensor([enc["token_type_ids"]]))[0].softmax(dim=-1)
        pos = enc["input_ids"].index(tok.mask_token_id)
        probs.append(out[0, pos, ids[i]].item())
    return sum(probs) / len(probs), ids


def ref_crows(tok, model, sent1, sent2, uncased):
    """metric.py mask_unigram."""
    import torch

    if uncased:
        sent1, sent2 = sent1.lower(), sent2.lower()
    t1, t2 = tok.encode(sent1, return_tensors="pt"), tok.encode(sent2, return_tensors="pt")
    m = difflib.SequenceMatcher(None, [str(x) for x in t1[0].tolist()], [str(x) for x in t2[0].tolist()])
    tpl1, tpl2 = [], []
    for op in m.get_opcodes():
        if op[0] == "equal":
            tpl1 += range(op[1], op[2])
            tpl2 += range(op[3], op[4])
    scores = [0.0, 0.0]
    for i in range(1, len(tpl1) - 1):
        for side, (ids, tpl) in enumerate(((t1, tpl1), (t2, tpl2))):
            masked = ids.clone()
            masked[0][tpl[i]] = tok.mask_token_id
            with torch.no_grad():
                hs = model(masked)[0].squeeze(0)[tpl[i]]
            scores[side] += torch.log_softmax(hs, dim=0)[ids[0][tpl[i]]].item()
    return scores


def ref_pll(tok, model, text, l2r):
    """minicons MaskedLMScorer.get_masked_tensors + compute_stats, one sentence."""
    import torch

    enc = tok([text])
    ids, word_ids = enc["input_ids"][0], enc.word_ids(0)
    targets = [i for i, t in enumerate(ids) if t not in (tok.cls_token_id, tok.sep_token_id, tok.pad_token_id)]
    total = 0.0
    for p in targets:
        masked = list(ids)
        masked[p] = tok.mask_token_id
        if l2r and word_ids[p] is not None:
            for j in range(p + 1, targets[-1] + 1):
                if word_ids[j] == word_ids[p]:
                    masked[j] = tok.mask_token_id
        with torch.no_grad():
            logits = model(torch.tensor([masked])).logits[0, p]
        total += (logits - logits.logsumexp(0))[ids[p]].item()
    return total


def ref_causal_ll(tok, model, text):
    """lm-eval loglikelihood("", text): [prefix] + tokens, sum of log p."""
    import torch

    prefix = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    ids = tok.encode(text, add_special_tokens=False)
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([[prefix] + ids])).logits[0], dim=-1)
    return sum(logp[i, t].item() for i, t in enumerate(ids))


# --- tests ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def intra(stereoset_items):
    return [it for it in stereoset_items if it.task == "intrasentence"][:N_ITEMS]


@pytest.mark.parametrize("model, cls_name", [("tiny-roberta", "AutoModelForMaskedLM"), ("tiny-bert", "AutoModelForMaskedLM")])
@pytest.mark.parametrize("leading_space", ["none", "bias-bench"])
def test_stereoset_mlm_matches_transcription(models_dir, intra, model, cls_name, leading_space):
    tok, net = _load(models_dir, model, cls_name)
    ours = _score(intra, models_dir, model, "stereoset-mlm", options={"leading_space": leading_space})
    applied = ours.provenance["method"]["options"]["leading_space_applied"]
    assert applied == (leading_space == "bias-bench" and model == "tiny-roberta")
    for item in intra:
        for s in item.sentences:
            ref, ids = ref_stereoset_mlm(tok, net, item.context, s.text, applied)
            rec = ours.record(s.id)
            assert list(rec.token_ids) == ids
            assert rec.score == pytest.approx(ref, rel=1e-5, abs=1e-8)
            first = tok.convert_ids_to_tokens(ids[0])
            if model == "tiny-roberta":  # the byte-level word-initial marker only with the fix
                assert first.startswith("Ġ") == applied


@pytest.mark.parametrize("model, uncased", [("tiny-roberta", False), ("tiny-bert", True)])
def test_crows_matches_transcription_and_probes_case(models_dir, crows_items, model, uncased):
    tok, net = _load(models_dir, model, "AutoModelForMaskedLM")
    items = crows_items[:N_ITEMS] + [it for it in crows_items if it.direction == "antistereo"][:2]
    ours = _score(items, models_dir, model, "crows-nangia")
    assert ours.provenance["method"]["options"]["lowercase"] is uncased  # metric.py's roberta/bert branches
    for item in items:
        r1, r2 = ("sent_more", "sent_less") if item.direction == "stereo" else ("sent_less", "sent_more")
        ref = ref_crows(tok, net, item.text(r1), item.text(r2), uncased)
        for role, value in zip((r1, r2), ref):
            rec = ours.record(item.sentence(role).id)
            assert rec.extra["unrounded"] == pytest.approx(value, abs=1e-4)
            assert rec.score == round(rec.extra["unrounded"], 3)


@pytest.mark.parametrize("method, l2r", [("pll", False), ("pll-word-l2r", True)])
def test_pll_on_byte_level_bpe_matches_transcription(models_dir, crows_items, intra, method, l2r):
    tok, net = _load(models_dir, "tiny-roberta", "AutoModelForMaskedLM")
    items = crows_items[:3] + intra[:3]
    ours = _score(items, models_dir, "tiny-roberta", method)
    for item in items:
        for s in item.sentences:
            assert ours.scores[s.id] == pytest.approx(ref_pll(tok, net, s.text, l2r), abs=1e-4)


def test_causal_ll_matches_lm_eval_convention(models_dir, crows_items):
    tok, net = _load(models_dir, "tiny-gpt2", "AutoModelForCausalLM")
    items = crows_items[:N_ITEMS]
    ours = _score(items, models_dir, "tiny-gpt2", "causal-ll")
    for item in items:
        for s in item.sentences:
            rec = ours.record(s.id)
            assert rec.score == pytest.approx(ref_causal_ll(tok, net, s.text), abs=1e-4)
            assert rec.n_tokens == len(tok.encode(s.text)) and sum(rec.token_logprobs) == pytest.approx(rec.score)
