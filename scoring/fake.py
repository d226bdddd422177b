"""A deterministic fake model (``fake:masked``, ``fake:causal``) for tests of everything above scoring.

``score_items(items, model="fake:masked", method=...)`` runs every method end to end — real
tokenizer facts, requests, deduplication, batching, the cache, reduction, records and
provenance — without loading or running a network: each log-probability the methods gather
comes from a sha256 of the inputs instead of a forward pass. So analysis, study, report and CLI
tests get real-shaped, reproducible score sets in milliseconds.

* ``fake:masked`` serves the masked-LM methods and ``stereoset-nsp`` (like ``bert-base-uncased``,
  it "has" a next-sentence head); ``fake:causal`` serves the causal methods.
* Tokenizer: a WordPiece built in memory with ``tokenizers`` whose pieces are every printable
  ASCII character and every two- and three-letter lower-case string, each also ``##``-prefixed
  for inside a word (so a word is two or three pieces, as with a real subword vocabulary;
  anything else is ``[UNK]``);
  uncased with ``[CLS]``/``[SEP]``/``[MASK]`` for ``masked``, cased with ``<|endoftext|>`` as BOS
  and EOS for ``causal``.
* ``log p(target | input, position)`` = ``log(0.001 + 0.998 u)`` with ``u`` uniform in [0, 1)
  from sha256 over (:data:`FAKE_VERSION`, kind, the input — for ``causal`` only the tokens up to
  ``position``, as causal attention sees them —, position, target). NSP: one draw per input
  (the segment ids included), ``log p`` / ``log (1 - p)`` for IsNext / NotNext. Values depend on nothing else: not on batching, padding, dtype, device,
  process or machine.

Not a language model: the numbers carry no meaning, only their determinism does. The model
identity (``fake:<kind>``, ``weights_sha256`` = sha256 of the rule's version) keys the cache as
usual.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import string
from typing import Any, Sequence

from stereoset_eval.scoring.backends import Backend, resolve_dtype
from stereoset_eval.scoring.model_info import fake_kind
from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.requests import BatchRow, Done
from stereoset_eval.scoring.tokenization import TokenizerView

FAKE_VERSION = "stereoset-eval fake model v1"
MAX_LENGTH = 512
_SERVES = {"masked": ("masked", "nsp"), "causal": ("causal",)}
_WORDS = {"masked": "masked language model", "causal": "causal language model",
          "nsp": "model with a next-sentence-prediction head"}


def fake_logprob(kind: str, input_ids: Sequence[int], token_type_ids: Sequence[int] | None, position: int,
                 target: int) -> float:
    """The fake natural-log probability of ``target`` at ``position`` (see the module docstring)."""
    seen = list(input_ids[: position + 1]) if kind == "causal" else list(input_ids)
    types = list(token_type_ids) if token_type_ids is not None and kind != "causal" else None
    drawn = None if kind == "nsp" else target  # nsp: one draw per input, shared by its two classes
    payload = json.dumps([FAKE_VERSION, kind, seen, types, position, drawn], separators=(",", ":"))
    u = int.from_bytes(hashlib.sha256(payload.encode("utf-8")).digest()[:8], "big") / 2.0 ** 64
    p = 0.001 + 0.998 * u
    if kind == "nsp":  # IsNext (0) and NotNext (1) add up to one
        if target not in (0, 1):
            raise ScoringError(f"the fake next-sentence head has classes 0 and 1, not {target}")
        return math.log(p if target == 0 else 1.0 - p)
    return math.log(p)


class FakeScorer:
    """Stands in for :class:`~stereoset_eval.scoring.scorers.Scorer`: rows in, gathered log-probabilities out
    (``launch`` computes them at once)."""

    last_layer = "all positions"  # there is no network, so no restricted last layer either

    asynchronous = False  # computed on the host, at once

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def launch(self, rows: Sequence[BatchRow]) -> Done:
        return Done(self.run(rows))

    def run(self, rows: Sequence[BatchRow]) -> list[list[float]]:
        kind = self.backend.kind
        return [[fake_logprob(kind, row.input_ids, row.token_type_ids, pos, target) for pos, target in row.gather]
                for row in rows]


@functools.lru_cache(maxsize=2)
def _tokenizer(family: str) -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    chars = [c for c in string.printable if not c.isspace()]
    grams = ["".join(g) for n in (2, 3) for g in itertools.product(string.ascii_lowercase, repeat=n)]
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] if family == "masked" else ["<|endoftext|>", "[UNK]"]
    pieces = chars + grams
    vocab = {t: i for i, t in enumerate(special + pieces + ["##" + p for p in pieces])}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=1000))
    tok.normalizer = normalizers.BertNormalizer(lowercase=family == "masked")
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    if family == "masked":
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
        tokens = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]",
                  "mask_token": "[MASK]"}
    else:
        tokens = {"unk_token": "[UNK]", "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"}
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=MAX_LENGTH, **tokens)


def load_fake_backend(model: str, *, kind: str, dtype: str | None = None) -> Backend:
    """A :class:`Backend` for ``fake:masked`` / ``fake:causal`` serving methods of ``kind``.

    The method's kind must be one the fake model has (a one-line :class:`ScoringError`
    otherwise, worded as for a real model). Runs on the CPU; ``dtype`` is checked and recorded
    as for a real model but moves no number.
    """
    import torch

    family = fake_kind(model)
    if kind not in _SERVES[family]:
        raise ScoringError(f"model {model!r} holds a {_WORDS[family]}, but this method needs a {_WORDS[kind]}")
    device = torch.device("cpu")
    tokenizer = _tokenizer(family)
    tokenizer_sha = hashlib.sha256(tokenizer.backend_tokenizer.to_str().encode("utf-8")).hexdigest()
    info: dict[str, Any] = {
        "model_id": model, "model_id_resolved": model, "revision": None,
        "weights_sha256": hashlib.sha256(FAKE_VERSION.encode("utf-8")).hexdigest(), "weight_files": None,
        "weights_hash_of": "the fake model's rule (stereoset_eval.scoring.fake.FAKE_VERSION)",
        "tokenizer_sha256": tokenizer_sha, "config_sha256": None,
        "model_class": f"Fake{family.capitalize()}{'NSP' if kind == 'nsp' else 'LM'}", "kind": kind,
        "load_report": {}, "head_split": False, "last_layer_at_scored_positions": False, "n_parameters": 0,
    }
    view = TokenizerView(tokenizer, model, MAX_LENGTH)
    if dtype is not None and dtype.lower() == "auto":  # the fake model runs on the CPU: auto is fp32 there
        dtype = "fp32"
    return Backend(model, kind, None, view, device, resolve_dtype(dtype, device), info=info)
