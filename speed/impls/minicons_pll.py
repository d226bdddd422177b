"""``minicons``: minicons 0.3.39 ``MaskedLMScorer.sequence_score`` for ``pll`` and ``pll-word-l2r``.

Called exactly as the G5 golden was made (``shared/fixtures/README.md``): consecutive chunks of
``minicons_batch_size`` sentences (32) in order, ``reduction=lambda x: x.sum(0).item()``,
``PLL_metric="original"`` / ``"within_word_l2r"``. minicons calls the tokenizer's
``batch_encode_plus``, which transformers 5 removed; the documented shim
``tokenizer.batch_encode_plus = tokenizer.__call__`` is applied before use.

minicons is an optional benchmark dependency (extra ``bench``); without it this
implementation reports itself unavailable and the benchmark records it as skipped.
"""

from __future__ import annotations

from typing import Any, Sequence

from speed.impls import CellContext, Implementation
from stereoset_eval.foundation.items import Item

PLL_METRIC = {"pll": "original", "pll-word-l2r": "within_word_l2r"}
MINICONS_VERSION = "0.3.39"


def unavailable() -> str | None:
    """None if minicons 0.3.39 can be imported, else the reason."""
    import importlib.metadata as md

    try:
        version = md.version("minicons")
    except md.PackageNotFoundError:
        return "minicons is not installed (pip install -e '.[bench]', or minicons==0.3.39 --no-deps + wonderwords)"
    if version != MINICONS_VERSION:
        return f"minicons {version} is installed; the benchmark pins {MINICONS_VERSION}"
    try:
        from minicons import scorer  # noqa: F401
    except ImportError as exc:
        return f"minicons cannot be imported: {exc}"
    return None


class MiniconsRunner:
    def __init__(self, ctx: CellContext) -> None:
        from minicons import scorer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        self.ctx = ctx
        self.scorer = scorer.MaskedLMScorer(str(ctx.model_path), device=ctx.device)
        self.scorer.tokenizer.batch_encode_plus = self.scorer.tokenizer.__call__  # removed in transformers 5

    def prepare(self, items: Sequence[Item]) -> list[tuple[str, str]]:
        return [(s.id, s.text) for item in items for s in item.sentences]

    def run(self, sentences: list[tuple[str, str]]) -> dict[str, float]:
        size, metric, out = self.ctx.minicons_batch_size, PLL_METRIC[self.ctx.method], {}
        for start in range(0, len(sentences), size):
            chunk = sentences[start:start + size]
            values = self.scorer.sequence_score([text for _, text in chunk], reduction=lambda x: x.sum(0).item(),
                                                PLL_metric=metric)
            out.update({sid: float(v) for (sid, _), v in zip(chunk, values)})
        return out

    def scores(self, output: Any) -> dict[str, float]:
        return output


IMPLEMENTATION = Implementation(
    name="minicons",
    description=f"minicons {MINICONS_VERSION} MaskedLMScorer.sequence_score, sum reduction, chunks of N sentences",
    methods=frozenset(PLL_METRIC),
    setup=MiniconsRunner,
    unavailable=unavailable,
)
