"""Assemble reports: one model (:func:`build_report`) or a study of many (:func:`build_study_report`).

Library first, CLI on top: ``stereoset-eval report`` calls :func:`build_report` then
:func:`stereoset_eval.analysis.report_writer.write_report`; a ``study`` command passes several
:class:`ModelResults` plus correlation tables to :func:`build_study_report`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from stereoset_eval.analysis.correlation import BalanceTable, Correlation
from stereoset_eval.analysis.crows_metric import CrowsResult
from stereoset_eval.analysis.pair_metrics import BalancedSS
from stereoset_eval.analysis.report_model import Figure, Report, Section, Table, fmt
from stereoset_eval.analysis.report_plots import benchmark_scatter
from stereoset_eval.analysis.report_sections import balanced_section, crows_section, pair_ss_section, stereoset_section
from stereoset_eval.analysis.results import MetricResult
from stereoset_eval.analysis.stereoset_metrics import StereoSetEvaluation

if TYPE_CHECKING:
    from stereoset_eval.analysis.benchmarks.base import Evaluation


@dataclass(frozen=True)
class ModelResults:
    """Everything computed for one model; any part may be absent.

    ``pair_ss`` and ``balanced`` are keyed by benchmark name (e.g. ``BMNE-StereoSet``).
    ``evaluations`` are registered benchmarks' results
    (:meth:`stereoset_eval.analysis.benchmarks.base.Benchmark.evaluate`); they render themselves,
    after the fixed parts.
    """

    model: str
    stereoset: StereoSetEvaluation | None = None
    stereoset_micro: StereoSetEvaluation | None = None
    crows: CrowsResult | None = None
    crows_benchmark: str = "CrowS-Pairs"
    pair_ss: Mapping[str, MetricResult] = field(default_factory=dict)
    balanced: Mapping[str, BalancedSS] = field(default_factory=dict)
    evaluations: Sequence["Evaluation"] = ()

    def sections(self) -> list[Section]:
        out = []
        if self.stereoset is not None:
            out.append(stereoset_section(self.stereoset, model=self.model))
        if self.stereoset_micro is not None:
            out.append(stereoset_section(self.stereoset_micro, model=self.model))
        if self.crows is not None:
            out.append(crows_section(self.crows, model=self.model, benchmark=self.crows_benchmark))
        for bench, res in self.pair_ss.items():
            out.append(pair_ss_section(res, model=self.model, benchmark=bench))
        for bench, bal in self.balanced.items():
            out.append(balanced_section(bal, model=self.model, benchmark=bench))
        for ev in self.evaluations:
            out.extend(ev.sections(model=self.model))
        return out

    def n_per_slice(self) -> dict[str, int]:
        """Units per reported slice (for the provenance block)."""
        n: dict[str, int] = {}
        for ev in (self.stereoset, self.stereoset_micro):
            if ev is not None:
                n.update({f"stereoset/{ev.variant}/{k}": s.n_examples for k, s in ev.scopes.items()})
        if self.crows is not None:
            n[f"{self.crows_benchmark}/all"] = self.crows.n_pairs
            n.update({f"{self.crows_benchmark}/{b}": r.n for b, r in self.crows.per_bias_type.items()})
        n.update({f"{b}/pair_ss": r.n for b, r in self.pair_ss.items()})
        for b, bal in self.balanced.items():
            n.update({f"{b}/{bal.group_by}/{g}": s.n for g, s in bal.groups.items()})
        for evaluation in self.evaluations:
            n.update(evaluation.n_per_slice())
        return n


def build_report(
    results: ModelResults, provenance: Mapping[str, Any], *, title: str | None = None, extra: Sequence[Section] = ()
) -> Report:
    """The report of one model: its result sections, then ``extra`` sections (distributions …)."""
    sections = tuple(results.sections()) + tuple(extra)
    if not sections:
        raise ValueError(f"nothing to report for {results.model}: no results given")
    return Report(title=title or f"stereoset-eval report: {results.model}", sections=sections, provenance=provenance)


#: one model's CI (low, high), or None where it has none
Interval = tuple[float, float] | None
#: per correlation name: the CI of each model's x and y value (same order as its labels)
Intervals = Mapping[str, tuple[Sequence[Interval], Sequence[Interval]]]


def correlation_section(
    correlations: Mapping[str, Correlation], *, key: str, title: str, scatter: bool = True,
    intervals: Intervals | None = None,
) -> Section:
    """One row per correlation (ρ, p, permutation p, n) and a labelled scatter of each, with the
    models' CIs as error bars where ``intervals`` has them."""
    rows = tuple(
        (
            name,
            c.x_name,
            c.y_name,
            str(c.n),
            f"{c.rho:.3f}",
            f"{c.p_value:.2g}",
            "–" if c.permutation_p_value is None else f"{c.permutation_p_value:.2g}",
        )
        for name, c in correlations.items()
    )
    table = Table(
        title=title,
        columns=("slice", "x", "y", "n models", "Spearman ρ", "p", "permutation p"),
        rows=rows,
        notes=(
            "p from scipy.stats.spearmanr (t approximation); permutation p from scipy.stats.permutation_test "
            "(pairings, two-sided), when requested.",
        ),
    )
    figures: tuple[Figure, ...] = ()
    if scatter:
        figures = tuple(
            Figure(
                title=f"{name}: {c.x_name} vs {c.y_name}",
                png=benchmark_scatter(
                    c.x_values,
                    c.y_values,
                    c.labels,
                    xlabel=f"{c.x_name} (%)",
                    ylabel=f"{c.y_name} (%)",
                    title=f"{name}: {c.format()}",
                    x_ci=(intervals or {}).get(name, (None, None))[0],
                    y_ci=(intervals or {}).get(name, (None, None))[1],
                ),
                alt=f"Scatter of {c.x_name} against {c.y_name} across {c.n} models",
            )
            for name, c in correlations.items()
            if c.x_values
        )
    return Section(
        key=key,
        title=title,
        tables=(table,),
        figures=figures,
        data={name: c.to_dict() for name, c in correlations.items()},
    )


def _cis(rows: Any, column: str) -> list[Interval]:
    """The (low, high) of ``column`` per row of a balance table; None where the bounds are absent or NaN."""
    lows, highs = rows.get(f"{column}_low"), rows.get(f"{column}_high")
    if lows is None or highs is None:
        return [None] * len(rows)
    def ok(v: Any) -> bool:
        return v is not None and math.isfinite(float(v))

    return [(float(lo), float(hi)) if ok(lo) and ok(hi) else None for lo, hi in zip(lows, highs)]


def balance_table_section(table: BalanceTable, *, key: str = "balance-table") -> Section:
    """The BMNE paper's Table 6 layout: per model, pre- and post-balance scores of two benchmarks, ρ below."""
    x, y = table.x_name, table.y_name
    rows = tuple(
        (str(r.model), fmt(r.x_pre), fmt(r.y_pre), fmt(r.x_post), fmt(r.y_post)) for r in table.rows.itertuples()
    )
    def rho(c: Correlation) -> str:  # scipy's t-approximation p misleads for few models: the permutation p beside it
        perm = "" if c.permutation_p_value is None else f", perm. {c.permutation_p_value:.2g}"
        return f"{c.rho:.3f} (p = {c.p_value:.2g}{perm})"

    rows += (("Spearman ρ (p)", rho(table.pre), "", rho(table.post), ""),)
    display = Table(
        title=f"{x} vs {y}: pre- and post-balance ss per model",
        columns=("model", f"{x} pre", f"{y} pre", f"{x} post", f"{y} post"),
        rows=rows,
    )
    stages = correlation_section(
        {"pre-balance": table.pre, "post-balance": table.post},
        key=key,
        title="Spearman ρ across models, before and after balancing",
        intervals={"pre-balance": (_cis(table.rows, "x_pre"), _cis(table.rows, "y_pre")),
                   "post-balance": (_cis(table.rows, "x_post"), _cis(table.rows, "y_post"))},
    )
    return Section(
        key=key,
        title=f"{x} vs {y}: balancing and cross-benchmark agreement",
        tables=(display,) + stages.tables,
        figures=stages.figures,
        data=table.to_dict(),
    )


def build_study_report(
    models: Sequence[ModelResults],
    provenance: Mapping[str, Any],
    *,
    title: str = "stereoset-eval study",
    correlations: Mapping[str, Correlation] | None = None,
    by_category: Mapping[str, Correlation] | None = None,
    balance: BalanceTable | None = None,
    extra: Sequence[Section] = (),
) -> Report:
    """Several models' sections followed by the cross-benchmark correlation sections."""
    sections: list[Section] = [s for m in models for s in m.sections()]
    if correlations:
        sections.append(correlation_section(correlations, key="correlation", title="Cross-benchmark Spearman ρ"))
    if by_category:
        sections.append(
            correlation_section(
                by_category, key="correlation-by-category", title="Cross-benchmark Spearman ρ per category"
            )
        )
    if balance is not None:
        sections.append(balance_table_section(balance))
    sections.extend(extra)
    return Report(title=title, sections=tuple(sections), provenance=provenance)
