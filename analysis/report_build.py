"""Assemble one model's report (:func:`build_report`) and the correlation sections a study adds.

Library first, CLI on top: ``stereoset-eval report`` calls :func:`build_report` then
:func:`stereoset_eval.analysis.report_writer.write_report`. The headline results come from each
benchmark (:meth:`~stereoset_eval.analysis.benchmarks.base.Benchmark.headline_results`) and
lead the report in one section (:func:`~stereoset_eval.analysis.results_table.results_section`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from stereoset_eval.analysis.correlation import BalanceTable, Correlation
from stereoset_eval.analysis.report_model import Figure, Report, Section, Table, fmt
from stereoset_eval.analysis.report_plots import benchmark_scatter
from stereoset_eval.analysis.results import HeadlineResult
from stereoset_eval.analysis.results_table import results_section
from stereoset_eval.foundation.provenance import ReportProvenance

if TYPE_CHECKING:
    from stereoset_eval.analysis.benchmarks.base import Evaluation, HeadlineContext


@dataclass(frozen=True)
class ModelResults:
    """Everything computed for one model: its benchmarks' evaluations
    (:meth:`stereoset_eval.analysis.benchmarks.base.Benchmark.evaluate`), which render themselves."""

    model: str
    evaluations: Sequence["Evaluation"] = ()

    def sections(self) -> list[Section]:
        return [s for ev in self.evaluations for s in ev.sections(model=self.model)]

    def n_per_slice(self) -> dict[str, int]:
        """Units per reported slice (for the provenance block)."""
        return {k: v for ev in self.evaluations for k, v in ev.n_per_slice().items()}

    def headline_results(self, context: "HeadlineContext") -> list[HeadlineResult]:
        return [r for ev in self.evaluations for r in ev.headline_results(context)]


def context_of(model: str, provenance: Mapping[str, Any]) -> "HeadlineContext":
    """Who a one-model report's numbers belong to, read from its provenance block (typed): the
    method, the method of each scored part (the score file's own block) and ``--limit``."""
    from stereoset_eval.analysis.benchmarks.base import HeadlineContext

    prov = ReportProvenance.of(provenance)
    scores = prov.scores
    parts = dict(scores.methods) if scores is not None else {}
    if scores is not None and not parts:  # a block without its methods summary: each run's own record
        parts = {p: str(r["method"]["name"]) for p, r in scores.runs.items()
                 if isinstance(r.get("method"), Mapping) and r["method"].get("name")}
    return HeadlineContext(model=model, method=prov.method, part_methods=parts, limit=prov.limit)


def build_report(
    results: ModelResults, provenance: Mapping[str, Any], *, title: str | None = None, extra: Sequence[Section] = ()
) -> Report:
    """The report of one model: its headline results, its result sections, then ``extra`` sections (distributions …)."""
    rows = tuple(results.headline_results(context_of(results.model, provenance)))
    sections = tuple(results.sections()) + tuple(extra)
    if not sections:
        raise ValueError(f"nothing to report for {results.model}: no results given")
    lead = (results_section(rows),) if rows else ()
    return Report(title=title or f"stereoset-eval report: {results.model}", sections=lead + sections,
                  provenance=provenance, results=rows)


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

