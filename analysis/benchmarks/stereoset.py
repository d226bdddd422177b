"""StereoSet (Nadeem et al. 2021): official lms / ss / icat, optionally the BMNE paper's micro variant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from stereoset_eval.analysis.benchmarks.base import Benchmark, Evaluation, EvaluationOptions, Source
from stereoset_eval.analysis.benchmarks.registry import register
from stereoset_eval.foundation.items import Item

if TYPE_CHECKING:
    from stereoset_eval.analysis.report_model import Section

INTRASENTENCE_METHODS = {"masked": "stereoset-mlm", "causal": "stereoset-causal"}  # BERT/RoBERTa path, GPT-2 path


class StereoSet(Benchmark):
    name = "stereoset"
    title = "StereoSet"
    description = "StereoSet (Nadeem et al. 2021): intrasentence + intersentence"
    loader_family = "stereoset"
    sources = (Source("stereoset", "StereoSet intrasentence examples of a StereoSet data file",
                      item_source="stereoset-intra"),)
    default_files = ("stereoset-dev", "stereoset-dev-ids-csv", "stereoset-dev-en", "stereoset-dev-jsonl")
    score_methods = {
        "intrasentence": INTRASENTENCE_METHODS,
        "intersentence": {"masked": "stereoset-nsp", "causal": "stereoset-inter-causal"},
    }
    own_methods = INTRASENTENCE_METHODS  # a study scores intrasentence examples
    curatable = True
    writes_predictions = True  # the official predictions.json (evaluation.py's input)

    def evaluate(self, items: Sequence[Item], scores: Mapping[str, float], options: EvaluationOptions, *,
                 title: str | None = None) -> Evaluation:
        from stereoset_eval.analysis.bootstrap import stereoset_with_ci
        from stereoset_eval.analysis.stereoset_metrics import OVERALL

        items = list(items)
        parts = {"official": stereoset_with_ci(items, scores, variant="official", config=options.bootstrap)}
        if options.micro:
            parts["micro"] = stereoset_with_ci(items, scores, variant="micro", config=options.bootstrap)
        return Evaluation(self, title or self.title, parts, headline=parts["official"][OVERALL].ss,
                          balanced=self.balanced(items, scores, options))

    def report_sections(self, evaluation: Evaluation, *, model: str) -> list["Section"]:
        from stereoset_eval.analysis.report_sections import stereoset_section

        label = model if evaluation.title == self.title else f"{model} ({evaluation.title})"
        out = [stereoset_section(evaluation.parts[v], model=label) for v in ("official", "micro") if v in evaluation.parts]
        return out + self.balanced_sections(evaluation, model=model)

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        n = {f"stereoset/{ev.variant}/{k}": s.n_examples
             for ev in evaluation.parts.values() for k, s in ev.scopes.items()}
        return {**n, **self.balanced_n_per_slice(evaluation)}


STEREOSET = register(StereoSet())
