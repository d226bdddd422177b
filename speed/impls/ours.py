"""``ours``: the public scoring API, :func:`stereoset_eval.scoring.api.score_items`, with the cache disabled.

Everything a user pays for is inside the timed call: option validation, tokenisation and
request building, deduplication, length bucketing, batched forward passes, reduction, records
and provenance. Only model loading is outside (``setup`` loads the backend, which
``score_items`` then reuses, as it does for consecutive calls in one process).
"""

from __future__ import annotations

from typing import Any, Sequence

from speed.impls import CellContext, Implementation, seconds_in_model
from speed.specs import ALL_METHODS
from stereoset_eval.foundation.items import Item


class OursRunner:
    def __init__(self, ctx: CellContext) -> None:
        from stereoset_eval.scoring.backends import load_backend

        self.ctx = ctx
        load_backend(str(ctx.model_path), kind=ctx.kind, device=ctx.device)  # cached for score_items

    def prepare(self, items: Sequence[Item]) -> Sequence[Item]:
        return items

    def run(self, items: Sequence[Item]) -> Any:
        from stereoset_eval.scoring.api import score_items

        return score_items(items, model=str(self.ctx.model_path), method=self.ctx.method, device=self.ctx.device,
                           batch_tokens=self.ctx.batch_tokens, use_cache=False)

    def scores(self, score_set: Any) -> dict[str, float]:
        if self.ctx.method == "crows-nangia":  # compare before metric.py's rounding to 3 decimals
            return {r.sentence_id: float(r.extra["unrounded"]) for r in score_set.records}
        return {r.sentence_id: float(r.score) for r in score_set.records}

    def model_seconds(self, score_set: Any) -> float:
        """The run's seconds in the model (:func:`~speed.impls.seconds_in_model`); the rest is host work."""
        return seconds_in_model(score_set)

    def scored_tokens(self, score_set: Any) -> int:
        """Tokens whose (pseudo-)log-probability the method scored (the tok/s numerator)."""
        return sum(r.n_tokens for r in score_set.records)


IMPLEMENTATION = Implementation(
    name="ours",
    description="stereoset_eval.scoring.api.score_items(..., use_cache=False): deduplicated, length-bucketed batches under a token "
                "budget; BERT-family last layer at the scored positions only",
    methods=frozenset(ALL_METHODS),
    setup=OursRunner,
)
