"""Curated pairs (the BMNE paper's harmonised schema): pair ss before balancing, balanced ss after."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Mapping, Sequence

from stereoset_eval.analysis.benchmarks.base import Benchmark, Evaluation, EvaluationOptions, Source
from stereoset_eval.analysis.benchmarks.crows_pairs import PAIR_METHODS
from stereoset_eval.analysis.benchmarks.registry import register
from stereoset_eval.foundation.items import Item

if TYPE_CHECKING:
    from stereoset_eval.analysis.benchmarks.base import HeadlineContext
    from stereoset_eval.analysis.report_model import Section
    from stereoset_eval.analysis.results import HeadlineResult


class CuratedPairs(Benchmark):
    name = "pairs"
    title = "Harmonised pairs"
    description = "Harmonised pair files written by `stereoset-eval curate` (BMNE column schema)"
    loader_family = "pairs"
    sources: ClassVar[tuple[Source, ...]] = (
        Source("curated", "pairs curated from another benchmark of the study by the curation pipeline (dimension tags)",
               from_file=False),
        Source("pairs", "a curated pairs file written by `stereoset-eval curate` (e.g. after human review)"),
    )
    score_methods = {"pairs": PAIR_METHODS}  # scored like CrowS-Pairs pairs
    own_methods = {}  # curated pairs have no reference scoring code
    balanced_by_default = True
    reference_methods = frozenset({"crows-nangia"})  # scored like CrowS-Pairs: metric.py's method first

    def evaluate(self, items: Sequence[Item], scores: Mapping[str, float], options: EvaluationOptions, *,
                 title: str | None = None) -> Evaluation:
        from stereoset_eval.analysis.bootstrap import pair_ss_with_ci
        from stereoset_eval.analysis.pair_metrics import drop_untagged

        items = list(items)
        balanced = self.balanced(items, scores, options)  # counts the pairs `exclude` leaves out
        by = self.balance_attribute(options)
        if by is not None:  # under `exclude`, pair ss counts the same pairs as the balanced ss beside it
            items, _ = drop_untagged(items, by, options.missing_group)
        parts = {}
        if options.pair_ss_section or balanced is None:
            parts["pair_ss"] = pair_ss_with_ci(items, scores, ties=options.ties, config=options.bootstrap)
        if "pair_ss" in parts:
            headline = parts["pair_ss"]
        else:
            assert balanced is not None  # pair_ss is computed whenever balanced is None
            headline = balanced.unbalanced
        return Evaluation(self, title or self.title, parts, headline=headline, balanced=balanced)

    def report_sections(self, evaluation: Evaluation, *, model: str) -> list["Section"]:
        from stereoset_eval.analysis.report_sections import pair_ss_section

        out = []
        if "pair_ss" in evaluation.parts:
            out.append(pair_ss_section(evaluation.parts["pair_ss"], model=model, benchmark=evaluation.title))
        return out + self.balanced_sections(evaluation, model=model)

    def headline_results(self, evaluation: Evaluation, context: "HeadlineContext") -> list["HeadlineResult"]:
        """pair ss (ranked on the leaderboard) and balanced ss; under the missing-group rule
        ``exclude`` both count the same pairs, and say how many were left out."""
        import dataclasses

        balanced = self.balanced_results(evaluation, context)
        if "pair_ss" not in evaluation.parts:
            return balanced
        left = balanced[0] if balanced else None
        pair = self.default_row(evaluation.parts["pair_ss"], evaluation, context, "pair ss")
        if left is not None:
            pair = dataclasses.replace(pair, n_left_out=left.n_left_out, left_out_reason=left.left_out_reason)
        return [pair, *balanced[1:]]

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        n = {f"{evaluation.title}/pair_ss": evaluation.parts["pair_ss"].n} if "pair_ss" in evaluation.parts else {}
        return {**n, **self.balanced_n_per_slice(evaluation)}

    def distribution_by(self, options: EvaluationOptions) -> str:
        return options.balance_by or options.balance_default


PAIRS = register(CuratedPairs())
