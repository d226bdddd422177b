"""StereoSet (Nadeem et al. 2021): official lms / ss / icat, optionally the BMNE paper's micro variant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from stereoset_eval.analysis.benchmarks.base import Benchmark, Evaluation, EvaluationOptions, Source
from stereoset_eval.analysis.benchmarks.registry import register
from stereoset_eval.foundation.items import Item

if TYPE_CHECKING:
    from stereoset_eval.analysis.benchmarks.base import HeadlineContext
    from stereoset_eval.analysis.report_model import Section
    from stereoset_eval.analysis.results import HeadlineResult

INTRASENTENCE_METHODS = {"masked": "stereoset-mlm", "causal": "stereoset-causal"}  # BERT/RoBERTa path, GPT-2 path
#: scopes shown as headline results, in order, and their label (``overall``: both tasks)
HEADLINE_SCOPES: dict[str, str] = {
    "intrasentence/overall": "intrasentence",
    "intersentence/overall": "intersentence",
    "overall": "intra+inter overall",
}
#: the terminal table's column of each metric
COLUMNS = {"lms": "lms", "ss": "ss / metric", "icat": "icat"}


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
    reference_methods = frozenset(INTRASENTENCE_METHODS.values())
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

    def headline_results(self, evaluation: Evaluation, context: "HeadlineContext") -> list["HeadlineResult"]:
        """lms / ss / icat per task and of both (when both were scored), per variant; the
        leaderboard shows the official ss and icat of both tasks, else of the one scored; the
        published dev numbers beside them where comparable (:mod:`~stereoset_eval.analysis.benchmarks.stereoset_reference`)."""
        from stereoset_eval.analysis.results import HeadlineResult
        from stereoset_eval.analysis.benchmarks.stereoset_reference import REFERENCE_SOURCE, published

        rows = []
        for variant, ev in evaluation.parts.items():
            both = all(f"{t}/overall" in ev.scopes for t in ("intrasentence", "intersentence"))
            shown = [s for s in HEADLINE_SCOPES if s in ev.scopes and (s != "overall" or both)]
            board = next((s for s in ("overall", *shown) if s in shown), None) if variant == "official" else None
            suffix = "" if variant == "official" else f" ({variant})"
            for scope in shown:
                task = scope.split("/")[0]
                method = context.part_methods.get(task) or context.method
                for metric, m in zip(("lms", "ss", "icat"), ev.scopes[scope].metrics):
                    ref = None if context.limit else published(context.model_id or context.model, method, task,
                                                               metric, m.n, variant)
                    on_board = scope == board and metric in ("ss", "icat")
                    rows.append(HeadlineResult.of(
                        m, benchmark=f"{evaluation.title} {HEADLINE_SCOPES[scope]}{suffix}", model=context.model,
                        method=method, metric=metric, column=COLUMNS[metric],
                        leaderboard=f"{evaluation.title} {metric}" if on_board else None,
                        ranked=on_board and metric == "ss", own_method=self.is_reference_method(method),
                        limit=context.limit, reference=ref, reference_source=REFERENCE_SOURCE if ref is not None else None))
        return rows + self.balanced_results(evaluation, context)

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        n = {f"stereoset/{ev.variant}/{k}": s.n_examples
             for ev in evaluation.parts.values() for k, s in ev.scopes.items()}
        return {**n, **self.balanced_n_per_slice(evaluation)}


STEREOSET = register(StereoSet())
