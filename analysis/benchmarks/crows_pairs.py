"""CrowS-Pairs (Nangia et al. 2020; revised file Neveol et al. 2022): metric.py's metric per bias type."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from stereoset_eval.analysis.benchmarks.base import Benchmark, Evaluation, EvaluationOptions, Source
from stereoset_eval.analysis.benchmarks.registry import register
from stereoset_eval.foundation.items import Item

if TYPE_CHECKING:
    from stereoset_eval.analysis.benchmarks.base import HeadlineContext
    from stereoset_eval.analysis.report_model import Section
    from stereoset_eval.analysis.results import HeadlineResult

#: metric.py's method for masked LMs; it has no causal path, so causal LMs get the sentence
#: log-likelihood, as bias-bench scores them
PAIR_METHODS = {"masked": "crows-nangia", "causal": "causal-ll"}


class CrowsPairs(Benchmark):
    name = "crows-pairs"
    title = "CrowS-Pairs"
    description = "CrowS-Pairs (Nangia et al. 2020) original or revised (Neveol et al. 2022)"
    loader_family = "crows"
    sources = (Source("crows-pairs", "CrowS-Pairs pairs (original or revised file)"),)
    default_files = ("crows-pairs",)
    score_methods = {"pairs": PAIR_METHODS}
    own_methods = PAIR_METHODS
    rounds_scores = True  # metric.py rounds to 3 decimals before comparing
    reference_methods = frozenset({"crows-nangia"})  # metric.py's own scoring (causal-ll is bias-bench's)
    curatable = True

    def evaluate(self, items: Sequence[Item], scores: Mapping[str, float], options: EvaluationOptions, *,
                 title: str | None = None) -> Evaluation:
        from stereoset_eval.analysis.bootstrap import crows_with_ci

        items = list(items)
        crows = crows_with_ci(items, scores, ndigits=options.ndigits, config=options.bootstrap)
        return Evaluation(self, title or self.title, {"crows": crows}, headline=crows.metric,
                          balanced=self.balanced(items, scores, options))

    def report_sections(self, evaluation: Evaluation, *, model: str) -> list["Section"]:
        from stereoset_eval.analysis.report_sections import crows_section

        crows = crows_section(evaluation.parts["crows"], model=model, benchmark=evaluation.title)
        return [crows, *self.balanced_sections(evaluation, model=model)]

    def headline_results(self, evaluation: Evaluation, context: "HeadlineContext") -> list["HeadlineResult"]:
        """metric.py's metric score (ranked on the leaderboard), then the balanced ss when balanced."""
        from stereoset_eval.analysis.results import HeadlineResult

        metric = HeadlineResult.of(evaluation.parts["crows"].metric, benchmark=evaluation.title, model=context.model,
                                   method=context.method, metric="metric score", column="ss / metric",
                                   leaderboard=f"{evaluation.title} metric", ranked=True,
                                   own_method=self.is_reference_method(context.method), limit=context.limit)
        return [metric, *self.balanced_results(evaluation, context)]

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        crows, t = evaluation.parts["crows"], evaluation.title
        n = {f"{t}/all": crows.n_pairs, **{f"{t}/{b}": r.n for b, r in crows.per_bias_type.items()}}
        return {**n, **self.balanced_n_per_slice(evaluation)}


CROWS_PAIRS = register(CrowsPairs())
