"""An optional language-model judge of stereotype validity and direction for curation.

:class:`CausalLMJudge` asks a user-supplied causal LM (Hugging Face, local path or hub id) which
gender an attribute is a stereotype of: it compares the log-probabilities of the continuations
``" women"`` and ``" men"`` after the prompt ``"Being {attribute} is a stereotype about"``. The
gender with the higher probability is the association; the instance is kept when it matches
the claimed gender and its labels are swapped when it does not. A margin under ``min_margin``
(nats) returns None, so the evidence rules of :mod:`stereoset_eval.curation.validity` decide.
Its ``name`` (``causal-lm:<model>``) is recorded in the curated version's provenance as the
decider. The evidence rules stay the default; pass the judge to
:func:`stereoset_eval.curation.pipeline.curate_files` (``curate --judge-model``).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

PROMPT = "Being {attribute} is a stereotype about"
CONTINUATIONS = {"female": " women", "male": " men"}


class CausalLMJudge:
    """Validity/direction decider backed by a causal LM (see module docstring)."""

    def __init__(self, model: str, *, min_margin: float = 0.1, device: str = "cpu") -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_id = model
        self.min_margin = float(min_margin)
        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.model = AutoModelForCausalLM.from_pretrained(model).to(device).eval()  # type: ignore[arg-type]  # transformers types .to oddly
        self.device = device
        self._torch = torch
        self.name = f"causal-lm:{model} (min_margin={self.min_margin})"

    def settings(self) -> dict[str, Any]:
        """Every setting that can change a verdict, for provenance (as :meth:`ChatJudge.settings`)."""
        return {"judge": "causal-lm", "name": self.name, "model": self.model_id, "min_margin": self.min_margin,
                "device": self.device, "prompt": PROMPT, "continuations": dict(CONTINUATIONS)}

    def logprob(self, prompt: str, continuation: str) -> float:
        """Sum of log-probabilities of ``continuation``'s tokens after ``prompt``."""
        torch = self._torch
        p_ids = self.tokenizer(prompt, return_tensors="pt").input_ids
        c_ids = self.tokenizer(continuation, return_tensors="pt").input_ids
        ids = torch.cat([p_ids, c_ids], dim=1).to(self.device)
        with torch.no_grad():
            logits = self.model(ids).logits[0, :-1].float()
        logp = torch.log_softmax(logits, dim=-1)
        start = p_ids.shape[1] - 1
        return float(sum(logp[start + k, int(t)] for k, t in enumerate(c_ids[0])))

    def __call__(self, words: Sequence[str], claimed: str, side: str, sentences: tuple[str, str]):
        from stereoset_eval.curation.validity import Verdict

        attribute = " ".join(w for w in words if w)
        if not attribute:
            return None
        prompt = PROMPT.format(attribute=attribute)
        scores = {g: self.logprob(prompt, c) for g, c in CONTINUATIONS.items()}
        margin = abs(scores["female"] - scores["male"])
        evidence = {"words": list(words), "claimed": claimed, "decider": self.name, "prompt": prompt,
                    "logprob": {g: round(v, 6) for g, v in scores.items()}, "margin": round(margin, 6)}
        if margin < self.min_margin:
            return None
        assoc = max(scores, key=lambda g: scores[g])
        conf = round(1.0 - math.exp(-margin), 3)
        if assoc == claimed:
            return Verdict("keep", "stereotype_validity", conf, f"{self.name}: {attribute!r} -> {assoc}", evidence)
        return Verdict("swap", "wrong_direction", conf,
                       f"{self.name}: {attribute!r} -> {assoc}, not {claimed}: labels swapped", evidence)
