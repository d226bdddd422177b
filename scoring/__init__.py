"""stereoset-eval scoring: language-model scores for benchmark sentences, faithful to the references.

Layout (one job per module; torch is imported lazily, so ``import scoring`` and the method
registry work without it):

* :mod:`stereoset_eval.scoring.api` — :func:`score_items`, the one entry point (items in, :class:`ScoreSet` out).
* :mod:`stereoset_eval.scoring.methods` — the registry ``METHODS`` of named scoring methods; each method turns
  items into :class:`~stereoset_eval.scoring.requests.Request` objects and gathered log-probabilities back
  into its documented number.
* :mod:`stereoset_eval.scoring.settings` — :class:`RunSettings`, the run's options (device, dtype,
  batch_tokens, last_layer, allocator) as one validated object.
* :mod:`stereoset_eval.scoring.model_info` — what a model's files say before loading (config, kind, heads).
* :mod:`stereoset_eval.scoring.backends` — loading pretrained models/tokenizers, device, dtype, fingerprints.
* :mod:`stereoset_eval.scoring.fake` — deterministic fake models (``fake:masked``, ``fake:causal``) for tests.
* :mod:`stereoset_eval.scoring.scorers` — batched forward passes (masked LM, causal LM, NSP head).
* :mod:`stereoset_eval.scoring.requests` / :mod:`stereoset_eval.scoring.engine` — deduplication, length bucketing under a
  token budget, cache-aware execution; :mod:`stereoset_eval.scoring.copies` / :mod:`stereoset_eval.scoring.engine_rows` —
  the masked-LM methods' copies as arrays (one request per sentence, int codes, numpy-built batches).
* :mod:`stereoset_eval.scoring.cache` — the SQLite result cache (WAL, one commit per batch).
* :mod:`stereoset_eval.scoring.export` — score files, provenance and StereoSet predictions files.
"""

from __future__ import annotations

from typing import Any

__all__ = ["score_items", "ScoreSet", "SentenceScore", "METHODS"]


def __getattr__(name: str) -> Any:  # lazy: keep `import scoring` cheap and torch-free
    if name == "score_items":
        from stereoset_eval.scoring.api import score_items

        return score_items
    if name in ("ScoreSet", "SentenceScore"):
        from stereoset_eval.scoring import records

        return getattr(records, name)
    if name == "METHODS":
        from stereoset_eval.scoring.methods import METHODS

        return METHODS
    raise AttributeError(f"module 'scoring' has no attribute {name!r}")
