"""What a benchmark is, in one object (lm-eval's Task seam, adapted).

A :class:`Benchmark` names everything the toolkit needs to know about one benchmark: its item
sources and default data files, the scoring method its reference code uses for each model
kind, how its metrics are computed from items and per-sentence scores
(:meth:`Benchmark.evaluate`) and which report sections show them
(:meth:`Benchmark.report_sections`). ``score``, ``report`` and the study ask the registry
(:mod:`stereoset_eval.analysis.benchmarks.registry`) instead of branching on names, so a new
benchmark is one file that defines a subclass and registers it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

from stereoset_eval.foundation.items import Item

if TYPE_CHECKING:  # the registry itself stays light (a study config is checked without numpy or matplotlib)
    from stereoset_eval.analysis.bootstrap import BootstrapConfig
    from stereoset_eval.analysis.pair_metrics import BalancedSS
    from stereoset_eval.analysis.report_model import Section
    from stereoset_eval.analysis.results import HeadlineResult, MetricResult


def _default_bootstrap() -> "BootstrapConfig":
    from stereoset_eval.analysis.bootstrap import BootstrapConfig

    return BootstrapConfig()


@dataclass(frozen=True)
class Source:
    """One way a study gets a benchmark's items (a study config's ``source``).

    Attributes:
        name: the ``source`` value in a study config.
        description: one line for ``ls`` and the docs.
        from_file: False when the items are curated from another benchmark of the study.
        item_source: keep only items whose ``Item.source`` is this (StereoSet: intrasentence).
    """

    name: str
    description: str
    from_file: bool = True
    item_source: str | None = None


@dataclass(frozen=True)
class EvaluationOptions:
    """Every option that changes a benchmark's numbers (recorded in provenance via :meth:`to_dict`).

    Attributes:
        bootstrap: how intervals are computed.
        micro: StereoSet: add the BMNE paper's micro variant.
        ndigits: CrowS-Pairs: rounding before comparing (None: raw floats).
        balance_by: balance any benchmark by this item attribute.
        balance_default: the attribute benchmarks balanced by default (curated pairs) use
            when ``balance_by`` is None.
        ties: tie rule of pair ss / balanced ss.
        missing_group: items without a group value: ``exclude`` (left out, counted — the
            default, as a study's ``analysis.untagged``), ``own-group`` or ``error``.
        pair_ss_section: curated pairs: also show pair ss in a section of its own (it is the
            unbalanced row of the balanced section too).
    """

    bootstrap: "BootstrapConfig" = field(default_factory=_default_bootstrap)
    micro: bool = False
    ndigits: int | None = 3
    balance_by: str | None = None
    balance_default: str = "dimension"
    ties: str = "anti"
    missing_group: str = "exclude"
    pair_ss_section: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "bootstrap": self.bootstrap.to_dict()}


@dataclass(frozen=True)
class HeadlineContext:
    """Who an evaluation's headline results belong to (what the numbers alone do not say).

    Attributes:
        model: the model's name (a study's name for it, or the model id).
        method: the scoring method(s) (``a, b`` for two tasks); None when unknown.
        model_id: the hub id or folder (looks up published numbers); default ``model``.
        part_methods: part of the benchmark (``intrasentence`` …) -> the method that scored it.
        limit: the run's ``--limit`` (None: every item).
    """

    model: str
    method: str | None = None
    model_id: str | None = None
    part_methods: Mapping[str, str] = field(default_factory=dict)
    limit: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """One benchmark's results for one model.

    Attributes:
        benchmark: the benchmark that computed them (it also renders them).
        title: the name shown in sections (the benchmark's title, or a study's name for it).
        parts: the benchmark's own result objects, by name (``official``, ``micro``, ``crows`` …).
        headline: the headline number before balancing (what cross-benchmark tables compare).
        balanced: the balanced ss, when computed (its groups are the categories).
    """

    benchmark: "Benchmark"
    title: str
    parts: Mapping[str, Any]
    headline: "MetricResult"
    balanced: "BalancedSS | None" = None

    @property
    def post(self) -> "MetricResult | None":
        """The balanced ss (None when not balanced)."""
        return self.balanced.balanced if self.balanced is not None else None

    def categories(self) -> dict[str, float]:
        """ss per balancing group (empty when not balanced)."""
        return {g: s.ss for g, s in self.balanced.groups.items()} if self.balanced is not None else {}

    def sections(self, *, model: str) -> list["Section"]:
        return self.benchmark.report_sections(self, model=model)

    def n_per_slice(self) -> dict[str, int]:
        return self.benchmark.n_per_slice(self)

    def headline_results(self, context: HeadlineContext) -> list["HeadlineResult"]:
        return self.benchmark.headline_results(self, context)


class Benchmark:
    """Base class: subclasses set the class attributes and implement :meth:`evaluate` and
    :meth:`report_sections`.

    Attributes:
        name: registry key and ``--benchmark`` value.
        title: display name in reports.
        description: one line for ``ls``.
        loader_family: the format family of its data files (``stereoset``, ``crows``, ``pairs``).
        sources: the study sources that give its items.
        default_files: manifest names tried in order when no data file is given.
        score_methods: part of the benchmark -> model kind -> the method ``score`` uses by default.
        own_methods: model kind -> the method of the benchmark's reference code (the study's
            ``benchmark`` protocol); empty when it has none.
        balanced_by_default: balance by ``EvaluationOptions.balance_default`` unless told otherwise.
        rounds_scores: its metric rounds scores to ``EvaluationOptions.ndigits`` before
            comparing (CrowS-Pairs' metric.py); recorded in provenance only then.
        curatable: the curation pipeline derives pairs from its items (a study's ``curated``
            source may name it as ``from``).
        writes_predictions: ``score`` also writes the official predictions file (StereoSet's
            ``predictions.json``, keyed by part).
        reference_methods: methods that are the benchmark's own reference code (the leaderboard
            prefers them); None: the values of ``own_methods``.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str]
    loader_family: ClassVar[str]
    sources: ClassVar[tuple[Source, ...]] = ()
    default_files: ClassVar[tuple[str, ...]] = ()
    score_methods: ClassVar[Mapping[str, Mapping[str, str]]] = {}
    own_methods: ClassVar[Mapping[str, str]] = {}
    balanced_by_default: ClassVar[bool] = False
    rounds_scores: ClassVar[bool] = False
    curatable: ClassVar[bool] = False
    writes_predictions: ClassVar[bool] = False
    reference_methods: ClassVar[frozenset[str] | None] = None

    def load(self, path: str | Path) -> list[Item]:
        """The items of a data file of this benchmark (format detected; another benchmark's file is an error)."""
        from stereoset_eval.curation.loaders.registry import load_items

        return load_items(self.loader_family, path)

    def own_method(self, kind: str) -> str | None:
        return self.own_methods.get(kind)

    def score_parts(self, items: Sequence[Item]) -> dict[str, list[Item]]:
        """The items ``score`` scores per part of :attr:`score_methods`, in part order: all items when the
        benchmark has one part, else the items whose ``task`` is the part (StereoSet's two tasks)."""
        parts = list(self.score_methods)
        if len(parts) == 1:
            return {parts[0]: list(items)}
        return {part: [it for it in items if it.task == part] for part in parts}

    def evaluate(
        self, items: Sequence[Item], scores: Mapping[str, float], options: EvaluationOptions, *, title: str | None = None
    ) -> Evaluation:
        """The benchmark's metrics with intervals."""
        raise NotImplementedError

    def report_sections(self, evaluation: Evaluation, *, model: str) -> list["Section"]:
        """The sections that show ``evaluation``."""
        raise NotImplementedError

    def n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        """Units per reported slice (for the provenance block)."""
        return self.balanced_n_per_slice(evaluation)

    def headline_results(self, evaluation: Evaluation, context: HeadlineContext) -> list["HeadlineResult"]:
        """The headline numbers of ``evaluation`` for the results table, ``results.json``, the
        leaderboard and the report; default: ``evaluation.headline`` (ranked on the leaderboard),
        then the balanced ss when balanced."""
        first = self.default_row(evaluation.headline, evaluation, context)
        return [first, *(r for r in self.balanced_results(evaluation, context) if r.metric != first.metric)]

    def default_row(self, result: "MetricResult", evaluation: Evaluation, context: HeadlineContext,
                    metric: str | None = None) -> "HeadlineResult":
        """A ranked headline row of ``result`` (column ``ss / metric`` when its ideal is 50)."""
        from stereoset_eval.analysis.results import HeadlineResult

        name = metric or result.name.replace("_", " ")
        return HeadlineResult.of(result, benchmark=evaluation.title, model=context.model, method=context.method,
                                 metric=name, column="ss / metric" if result.ideal == 50.0 else name,
                                 leaderboard=f"{evaluation.title} {name}", ranked=True,
                                 own_method=self.is_reference_method(context.method), limit=context.limit)

    def is_reference_method(self, method: str | None) -> bool:
        """``method`` (or one of ``a, b``) is this benchmark's own reference code."""
        ref = self.reference_methods if self.reference_methods is not None else frozenset(self.own_methods.values())
        return bool(set((method or "").split(", ")) & ref)

    def distribution_by(self, options: EvaluationOptions) -> str:
        """The item attribute whose distribution the report shows."""
        return "bias_type"

    # helpers shared by benchmarks -------------------------------------------------------

    def balance_attribute(self, options: EvaluationOptions) -> str | None:
        return options.balance_by or (options.balance_default if self.balanced_by_default else None)

    def balanced(self, items: Iterable[Item], scores: Mapping[str, float], options: EvaluationOptions) -> "BalancedSS | None":
        """Balanced ss by :meth:`balance_attribute` (None when not balanced)."""
        from stereoset_eval.analysis.bootstrap import balanced_ss_with_ci

        by = self.balance_attribute(options)
        if by is None:
            return None
        return balanced_ss_with_ci(
            items, scores, group_by=by, ties=options.ties, missing_group=options.missing_group, config=options.bootstrap
        )

    def balanced_sections(self, evaluation: Evaluation, *, model: str) -> list["Section"]:
        from stereoset_eval.analysis.report_sections import balanced_section

        if evaluation.balanced is None:
            return []
        return [balanced_section(evaluation.balanced, model=model, benchmark=evaluation.title)]

    def balanced_results(self, evaluation: Evaluation, context: HeadlineContext) -> list["HeadlineResult"]:
        """pair ss (ranked on the leaderboard) and balanced ss of a balanced evaluation, with the
        pairs the missing-group rule ``exclude`` left out of both (empty when not balanced)."""
        from stereoset_eval.analysis.results import HeadlineResult

        bal = evaluation.balanced
        if bal is None:
            return []
        left = int(bal.options.get("excluded_untagged") or 0)
        why = f"no {bal.group_by} value (missing-group rule 'exclude')" if left else None
        own = self.is_reference_method(context.method)

        def row(m: "MetricResult", metric: str, column: str, leaderboard: str | None) -> "HeadlineResult":
            return HeadlineResult.of(m, benchmark=evaluation.title, model=context.model, method=context.method,
                                     metric=metric, column=column, leaderboard=leaderboard,
                                     ranked=leaderboard is not None, own_method=own, n_left_out=left,
                                     left_out_reason=why, limit=context.limit)

        return [row(bal.unbalanced, "pair ss", "ss / metric", f"{evaluation.title} pair ss"),
                row(bal.balanced, f"balanced ss ({bal.group_by})", "balanced ss", None)]

    def balanced_n_per_slice(self, evaluation: Evaluation) -> dict[str, int]:
        bal = evaluation.balanced
        if bal is None:
            return {}
        return {f"{evaluation.title}/{bal.group_by}/{g}": s.n for g, s in bal.groups.items()}

    def __repr__(self) -> str:
        return f"<benchmark {self.name}>"
