"""What is benchmarked: models, the dataset each method reads, and agreement tolerances.

Two kinds of model:

* ``fixture`` — the trained tiny models in ``shared/fixtures/models`` (their numbers are
  checked against the reference goldens elsewhere; here they make agreement checks strong);
* ``random-init`` — BERT-base and GPT-2-small *sized* models with random weights, built from a
  config (:mod:`speed.models`). Same compute per token as the real models, so the timing
  is representative; their scores mean nothing as bias measurements and are used only to
  check that every implementation computes the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MASKED_METHODS: tuple[str, ...] = ("crows-nangia", "pll", "pll-word-l2r", "stereoset-mlm")
CAUSAL_METHODS: tuple[str, ...] = ("stereoset-causal",)
ALL_METHODS: tuple[str, ...] = MASKED_METHODS + CAUSAL_METHODS

# the dataset each method is timed on
METHOD_DATASET: dict[str, str] = {
    "crows-nangia": "crows-pairs",
    "pll": "crows-pairs",
    "pll-word-l2r": "crows-pairs",
    "stereoset-mlm": "stereoset-intra",
    "stereoset-causal": "stereoset-intra",
    "study": "crows-pairs",
}

# the number compared between implementations, per method
COMPARED: dict[str, str] = {
    "crows-nangia": "unrounded summed log-probability of the shared tokens (before metric.py's round(., 3))",
    "pll": "summed natural-log pseudo-log-likelihood",
    "pll-word-l2r": "summed natural-log pseudo-log-likelihood (within-word l2r)",
    "stereoset-mlm": "mean probability of the attribute word's pieces",
    "stereoset-causal": "geometric-mean token probability",
    "study": "pll's summed pseudo-log-likelihood (the study run's pll vs pll alone; the other methods' "
             "differences from running alone are reported separately)",
}

# |a - b| <= atol + rtol * |b|: float32 noise of batched vs unbatched kernels (fixtures README §5)
# plus float32 summation in minicons; a real mismatch (wrong token masked) is orders larger.
TOLERANCE: dict[str, tuple[float, float]] = {
    "crows-nangia": (1e-4, 1e-5),
    "pll": (1e-4, 1e-5),
    "pll-word-l2r": (1e-4, 1e-5),
    "stereoset-mlm": (1e-10, 1e-5),
    "stereoset-causal": (1e-10, 1e-5),
    "study": (1e-4, 1e-5),
}


@dataclass(frozen=True)
class ModelSpec:
    """A model the benchmark runs.

    Attributes:
        name: short name used in the table and JSON.
        kind: ``masked`` or ``causal``.
        origin: ``fixture`` (a folder in ``shared/fixtures/models``) or ``random-init``.
        size: ``fixture`` or ``base`` (selects the data slice, see :data:`DEFAULT_SLICES`).
        fixture: the fixture folder name (the model itself, or the tokenizer a random-init
            model borrows).
        config: for random-init models, the transformers config class and its arguments.
        seed: ``torch.manual_seed`` for random init (so every build has identical weights).
        note: what the reader must know about it.
    """

    name: str
    kind: str
    origin: str
    size: str
    fixture: str
    config: tuple[str, dict[str, Any]] | None = None
    seed: int = 0
    note: str = ""
    methods: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.methods:
            object.__setattr__(self, "methods", MASKED_METHODS if self.kind == "masked" else CAUSAL_METHODS)


_RANDOM_NOTE = ("random-init weights: timing only (same compute as the real model; its scores are not bias "
                "measurements). Tokenizer borrowed from the {fixture} fixture (vocab 2,000; it splits more words "
                "than the real model's tokenizer would, so inputs are slightly longer); embedding matrix sized "
                "{vocab:,} as in the real model.")

MODELS: dict[str, ModelSpec] = {m.name: m for m in (
    ModelSpec("tiny-bert", "masked", "fixture", "fixture", "tiny-bert", note="trained fixture model"),
    ModelSpec("tiny-roberta", "masked", "fixture", "fixture", "tiny-roberta", note="trained fixture model"),
    ModelSpec("tiny-gpt2", "causal", "fixture", "fixture", "tiny-gpt2", note="trained fixture model"),
    ModelSpec(
        "bert-base-random", "masked", "random-init", "base", "tiny-bert",
        config=("BertConfig", {"vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
                               "num_attention_heads": 12, "intermediate_size": 3072,
                               "max_position_embeddings": 512, "type_vocab_size": 2,
                               "pad_token_id": 0, "architectures": ["BertForMaskedLM"]}),
        note=_RANDOM_NOTE.format(fixture="tiny-bert", vocab=30522),
    ),
    ModelSpec(
        "gpt2-small-random", "causal", "random-init", "base", "tiny-gpt2",
        config=("GPT2Config", {"vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
                               "n_head": 12, "bos_token_id": 0, "eos_token_id": 0,
                               "architectures": ["GPT2LMHeadModel"]}),
        note=_RANDOM_NOTE.format(fixture="tiny-gpt2", vocab=50257),
    ),
)}

# items per dataset slice (first N in file order): CrowS pairs, StereoSet intrasentence examples;
# None = the whole dataset (1,508 CrowS-Pairs pairs; 2,106 StereoSet intrasentence dev examples)
DEFAULT_SLICES: dict[str, dict[str, int | None]] = {
    "fixture": {"crows-pairs": None, "stereoset-intra": None},
    "base": {"crows-pairs": 4, "stereoset-intra": 300},
}
# the slow baselines (reference loop, minicons: one unbatched pass per masked token, or per-call
# overhead) on the fixture models' whole datasets would take most of an hour on 2 cores; they
# score this slice (the first N items) and are compared per sentence (sentences/s ratios, numbers
# checked on the sentences both scored). Base-sized models: the reference loop scores the same 4
# CrowS-Pairs pairs as the others (~15 s a round) and the first 50 of the 300 StereoSet examples
# (on 50 alone, 150 sentences of ~20 lengths, any batched run pads or runs small batches that the
# floor's topped-up exact-length batches do not pay for: ours 1.12x the floor there, 1.02x on 300).
BASELINE_SLICES: dict[str, dict[str, int | None]] = {
    "fixture": {"crows-pairs": 100, "stereoset-intra": 100},
    "base": {"crows-pairs": 4, "stereoset-intra": 50},
}
SLOW_BASELINES: tuple[str, ...] = ("reference-loop", "minicons")
# the study row: the BMNE protocol's masked-LM methods over CrowS-Pairs in one run (one SharedWork)
STUDY_METHODS: tuple[str, ...] = ("pll", "pll-word-l2r", "crows-nangia")
SMOKE_SLICES: dict[str, dict[str, int | None]] = {
    "fixture": {"crows-pairs": 3, "stereoset-intra": 2},
    "base": {"crows-pairs": 2, "stereoset-intra": 2},
}


def within_tolerance(method: str, value: float, ours: float) -> bool:
    """True if ``value`` equals ``ours`` to the method's float32 tolerance.

    >>> within_tolerance("pll", -40.00003, -40.0), within_tolerance("pll", -40.1, -40.0)
    (True, False)
    """
    atol, rtol = TOLERANCE[method]
    return abs(value - ours) <= atol + rtol * abs(ours)
