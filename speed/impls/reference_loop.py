"""``reference-loop``: the reference implementations' control flow, re-implemented plainly.

One unbatched forward pass of the full model (logits at every position, over the whole
vocabulary) per masked token per sentence, as the references do:

* ``crows-nangia`` — nyu-mll/crows-pairs ``metric.py`` (``mask_unigram`` / ``get_span`` /
  ``get_log_prob_unigram``): difflib over the two id lists, each shared token masked in turn,
  ``log_softmax`` of the masked row, summed as Python floats;
* ``pll`` / ``pll-word-l2r`` — the PLL definition one masked copy at a time (what minicons
  batches), scored positions = ids other than CLS/SEP/PAD;
* ``stereoset-mlm`` — StereoSet ``evaluate_intrasentence`` at ``--batch-size 1``: one input per
  attribute-word piece, ``softmax`` over the full logits tensor, mean of the probabilities;
* ``stereoset-causal`` — StereoSet ``eval_generative_models.evaluate_intrasentence``: the
  start-token distribution once, then one forward pass per sentence, ``softmax``, geometric
  mean of the token probabilities via ``log2``.

It is written independently of :mod:`stereoset_eval.scoring` (so agreement is a real cross-check).

Autograd: metric.py never disables it (``shared/fixtures/README.md`` §6: "autograd on (metric.py
does not use no_grad)"), so by default (``reference_autograd="as-reference"``) the
``crows-nangia`` loop keeps autograd on, as the reference it stands for; the other loops have no
such reference evidence and run under ``torch.inference_mode()``. ``reference_autograd="off"``
runs every loop in inference mode (the benchmark's ``--reference-autograd off``): a stricter
baseline than any reference. The loop uses the fast tokenizer where the references use the slow
one — tokenisation is a small share of the time, and this only makes the loop faster.
"""

from __future__ import annotations

import difflib
import math
import string
from typing import Any, Sequence

from speed.impls import CellContext, Implementation
from speed.specs import ALL_METHODS
from stereoset_eval.foundation.items import Item

_PUNCT = str.maketrans("", "", string.punctuation)
_UNCASED_BY_TYPE = {"bert": True, "albert": True, "roberta": False}  # metric.py's per-model constants
# methods whose reference runs its forward passes with autograd on (see the module docstring)
AUTOGRAD_IN_REFERENCE = frozenset({"crows-nangia"})
REFERENCE_AUTOGRAD_MODES = ("as-reference", "off")


def uses_autograd(method: str, mode: str) -> bool:
    """Whether the loop for ``method`` runs with autograd on under ``mode``.

    >>> uses_autograd("crows-nangia", "as-reference"), uses_autograd("pll", "as-reference")
    (True, False)
    >>> uses_autograd("crows-nangia", "off")
    False
    """
    if mode not in REFERENCE_AUTOGRAD_MODES:
        raise ValueError(f"reference_autograd must be one of {REFERENCE_AUTOGRAD_MODES}, got {mode!r}")
    return mode == "as-reference" and method in AUTOGRAD_IN_REFERENCE


class ReferenceLoopRunner:
    def __init__(self, ctx: CellContext) -> None:
        import torch
        import transformers
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        self.torch, self.ctx = torch, ctx
        path = str(ctx.model_path)
        self.tok = transformers.AutoTokenizer.from_pretrained(path)
        cls = transformers.AutoModelForCausalLM if ctx.kind == "causal" else transformers.AutoModelForMaskedLM
        self.device = torch.device(ctx.device)
        self.model = cls.from_pretrained(path).eval().to(self.device)
        self.autograd = uses_autograd(ctx.method, ctx.reference_autograd)
        probe = "The Quick Brown Fox"
        self.uncased = _UNCASED_BY_TYPE.get(self.model.config.model_type,
                                            self.tok.tokenize(probe) == self.tok.tokenize(probe.lower()))

    def prepare(self, items: Sequence[Item]) -> Sequence[Item]:
        return items

    def run(self, items: Sequence[Item]) -> dict[str, float]:
        loop = {"crows-nangia": self._crows, "pll": self._pll, "pll-word-l2r": self._pll,
                "stereoset-mlm": self._stereoset_mlm, "stereoset-causal": self._stereoset_causal}[self.ctx.method]
        if self.autograd:  # as metric.py: no no_grad anywhere
            return loop(items)
        with self.torch.inference_mode():
            return loop(items)

    def scores(self, output: dict[str, float]) -> dict[str, float]:
        return output

    # --- CrowS-Pairs metric.py ----------------------------------------------------------------
    def _masked_logprob(self, masked: Any, pos: int, target: int) -> float:
        logits = self.model(masked.to(self.device)).logits[0]  # [length, vocab], as output[0].squeeze(0)
        return self.torch.log_softmax(logits[pos], dim=0)[target].item()  # .item(), as metric.py

    def _crows(self, items: Sequence[Item]) -> dict[str, float]:
        torch, mask_id, out = self.torch, self.tok.mask_token_id, {}
        for item in items:
            r1, r2 = ("sent_more", "sent_less") if item.direction == "stereo" else ("sent_less", "sent_more")
            s1, s2 = item.sentence(r1), item.sentence(r2)
            t1, t2 = (s1.text.lower(), s2.text.lower()) if self.uncased else (s1.text, s2.text)
            ids1 = torch.tensor([self.tok.encode(t1)])
            ids2 = torch.tensor([self.tok.encode(t2)])
            template1, template2 = _get_span(ids1[0].tolist(), ids2[0].tolist())
            lp1 = lp2 = 0.0
            for i in range(1, len(template1) - 1):
                m1, m2 = ids1.clone(), ids2.clone()
                m1[0][template1[i]] = mask_id
                m2[0][template2[i]] = mask_id
                lp1 += self._masked_logprob(m1, template1[i], int(ids1[0][template1[i]]))
                lp2 += self._masked_logprob(m2, template2[i], int(ids2[0][template2[i]]))
            out[s1.id], out[s2.id] = lp1, lp2
        return out

    # --- PLL, one masked copy at a time -------------------------------------------------------
    def _pll(self, items: Sequence[Item]) -> dict[str, float]:
        torch, tok, out = self.torch, self.tok, {}
        l2r = self.ctx.method == "pll-word-l2r"
        skip = {tok.cls_token_id, tok.sep_token_id, tok.pad_token_id}
        for item in items:
            for sentence in item.sentences:
                enc = tok(sentence.text)
                ids, word_ids = list(enc["input_ids"]), enc.word_ids()
                positions = [i for i, t in enumerate(ids) if t not in skip]
                total = 0.0
                for p in positions:
                    masked = torch.tensor([ids])
                    masked[0, p] = tok.mask_token_id
                    if l2r and word_ids[p] is not None:
                        for j in range(p + 1, positions[-1] + 1):
                            if word_ids[j] == word_ids[p]:
                                masked[0, j] = tok.mask_token_id
                    total += self._masked_logprob(masked, p, ids[p])
                out[sentence.id] = total
        return out

    # --- StereoSet, batch size 1 ----------------------------------------------------------------
    def _stereoset_mlm(self, items: Sequence[Item]) -> dict[str, float]:
        tok, out = self.tok, {}
        for item in items:
            context = item.context or ""
            blank = max(i for i, w in enumerate(context.split(" ")) if "BLANK" in w)
            for sentence in item.sentences:
                word = sentence.text.split(" ")[blank].translate(_PUNCT)
                targets = tok.encode(word, add_special_tokens=False)
                probs = []
                for i, target in enumerate(targets):
                    enc = tok(context.replace("BLANK", tok.decode(targets[:i]) + tok.mask_token),
                              return_tensors="pt").to(self.device)
                    output = self.model(**enc).logits.softmax(dim=-1)  # the whole [1, length, vocab] tensor
                    mask_pos = enc["input_ids"][0].tolist().index(tok.mask_token_id)
                    probs.append(float(output[0, mask_pos, target]))
                out[sentence.id] = sum(probs) / len(probs)
        return out

    def _stereoset_causal(self, items: Sequence[Item]) -> dict[str, float]:
        torch, tok, out = self.torch, self.tok, {}
        start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
        initial = self.model(torch.tensor([[start]], device=self.device)).logits.softmax(dim=-1)
        for item in items:
            for sentence in item.sentences:
                tokens = tok.encode(sentence.text, add_special_tokens=False)
                joint = [float(initial[0, 0, tokens[0]])]
                output = self.model(torch.tensor([tokens], device=self.device)).logits.softmax(dim=-1)
                for idx in range(1, len(tokens)):
                    joint.append(float(output[0, idx - 1, tokens[idx]]))
                out[sentence.id] = 2 ** (sum(math.log2(p) for p in joint) / len(joint))
        return out


def _get_span(seq1: list[int], seq2: list[int]) -> tuple[list[int], list[int]]:
    """metric.py ``get_span``: positions inside difflib's ``equal`` blocks of the two id lists."""
    template1: list[int] = []
    template2: list[int] = []
    matcher = difflib.SequenceMatcher(None, [str(x) for x in seq1], [str(x) for x in seq2])
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            template1 += range(a0, a1)
            template2 += range(b0, b1)
    return template1, template2


IMPLEMENTATION = Implementation(
    name="reference-loop",
    description="the references' control flow: one unbatched full forward pass per masked token per sentence "
                "(metric.py, StereoSet --batch-size 1); crows-nangia with autograd on as metric.py (unless "
                "--reference-autograd off), the others in inference mode; fast tokenizer",
    methods=frozenset(ALL_METHODS),
    setup=ReferenceLoopRunner,
)
