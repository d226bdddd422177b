"""The headline results of a report: an lm-eval-style terminal table, ``results.json`` and the leaderboard.

Read from the report's typed results (:class:`~stereoset_eval.analysis.results.HeadlineResult`,
which each benchmark produces in
:meth:`~stereoset_eval.analysis.benchmarks.base.Benchmark.headline_results`), never re-computed
and never recognised by benchmark: one row per (model, method, benchmark, metric) with its value,
CI, ideal, n and the units left out (and why). A limited run (``--limit``) is marked in the table
title and in every row.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from stereoset_eval.analysis.report_model import Report, Section, Table, fmt_ci
from stereoset_eval.analysis.results import HeadlineResult
from stereoset_eval.foundation.provenance import ReportProvenance


def report_provenance(report: Report | Mapping[str, Any]) -> ReportProvenance:
    """The provenance of a report (a :class:`Report` or its dict), typed."""
    prov = report.provenance if isinstance(report, Report) else report.get("provenance")
    return ReportProvenance.of(prov if isinstance(prov, Mapping) else {})


def report_limit(report: Report | Mapping[str, Any]) -> int | None:
    """``--limit`` of the run behind a report (study options, or the score file's command)."""
    return report_provenance(report).limit


def result_rows(report: Report | Mapping[str, Any], *, limit: int | None = None) -> list[HeadlineResult]:
    """Every headline result of ``report`` (a :class:`Report`, its ``to_dict()`` or a parsed report.json).

    Args:
        limit: the run's ``--limit`` (default: read from the report's provenance); a limited
            run's rows carry it and show no published numbers.
    """
    limit = limit if limit is not None else report_limit(report)
    if isinstance(report, Report):
        rows = list(report.results)
    else:
        rows = [HeadlineResult.from_dict(r) for r in report.get("results") or ()]
    if limit:
        return [dataclasses.replace(r, limit=limit, reference=None, reference_source=None) for r in rows]
    return rows


def results_json(rows: Sequence[HeadlineResult]) -> str:
    """``results.json``: a flat list of rows (model, benchmark, metric, value, ci_low, ci_high, n,
    n_left_out, left_out_reason, ideal …)."""
    return json.dumps([r.row() for r in rows], indent=2, ensure_ascii=False) + "\n"


def table_title(title: str, limit: int | None) -> str:
    """A table title, marked when the run scored only the first ``limit`` items."""
    return f"LIMITED RUN (first {limit} items per benchmark, not a result) — {title}" if limit else title


def _cell(r: HeadlineResult | None) -> str:
    if r is None or r.value is None:
        return "–"
    return f"{r.value:.2f}" + ("" if r.ci is None else f" [{r.ci.low:.2f}, {r.ci.high:.2f}]")


#: the terminal table's usual columns, in order (others follow in the order the results give them)
COLUMN_ORDER: tuple[str, ...] = ("ss / metric", "lms", "icat", "balanced ss")


def _shown(model: str) -> str:
    """A local folder by its last part, a hub id as it is."""
    return model.rstrip("/").rsplit("/", 1)[-1] if model.startswith(("/", ".", "~")) else model


def _left_out(rows: Sequence[HeadlineResult]) -> tuple[int, str | None]:
    r = max(rows, key=lambda r: r.n_left_out)
    return r.n_left_out, r.left_out_reason


def _pipe_table(header: Sequence[str], body: Sequence[Sequence[str]], left: set[int]) -> list[str]:
    widths = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(header)]

    def fmt(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {c.ljust(w) if i in left else c.rjust(w)} " for i, (c, w) in
                              enumerate(zip(cells, widths))) + "|"

    rule = "|" + "|".join("-" * (w + 2) if i in left else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return [fmt(header), rule, *(fmt(b) for b in body)]


def format_table(rows: Sequence[HeadlineResult], *, title: str = "Results", limit: int | None = None) -> str:
    """The rows as a Markdown pipe table (lm-eval style): one line per model, method and benchmark,
    with n and the units left out beside the numbers (the reasons below the table)."""
    limit = limit if limit is not None else next((r.limit for r in rows if r.limit), None)
    groups: dict[tuple[str, str | None, str], dict[str, HeadlineResult]] = {}
    ideals: dict[str, float | None] = {}
    for r in rows:
        col = r.column or r.metric
        ideals.setdefault(col, r.ideal)
        groups.setdefault((r.model, r.method, r.benchmark), {}).setdefault(col, r)
    used = [c for c in COLUMN_ORDER if c in ideals] + [c for c in ideals if c not in COLUMN_ORDER]
    show_ref = any(r.reference is not None for r in rows)
    headings = [c if ideals[c] is None else f"{c} (ideal {ideals[c]:g})" for c in used]
    header = ["model", "method", "benchmark", "n", "left out"] + headings + (["published ss · lms · icat"] if show_ref else [])
    body, reasons = [], []
    for (model, method, bench), cells in groups.items():
        n = next((r.n for r in cells.values() if r.n is not None), None)
        left, why = _left_out(list(cells.values()))
        if left:
            reasons.append(f"{_shown(model)}, {bench}: {left} left out — {why}")
        line = [_shown(model), method or "–", bench, "–" if n is None else str(n), str(left)]
        line += [_cell(cells.get(c)) for c in used]
        if show_ref:
            refs = [cells.get(c) for c in ("ss / metric", "lms", "icat")]
            line.append(" · ".join(f"{r.reference:.2f}" for r in refs if r is not None and r.reference is not None)
                        or "–")
        body.append(line)
    out = [table_title(title, limit), "", *_pipe_table(header, body, {0, 1, 2})]
    if not body:
        out.append("(no results)")
    notes = ["values in percent with 95% bootstrap CIs; n: units counted; left out: units of the benchmark "
             "not counted, with the reason below"] + reasons
    if show_ref:
        notes.append("published: official StereoSet dev scores (Nadeem et al. 2021, evaluation.py) for the same "
                     "model id and method on the full dev split")
    return "\n".join(out + [""] + notes)


def results_section(rows: Sequence[HeadlineResult], *, key: str = "results") -> Section:
    """The report's section of every headline result: value with CI, ideal, n and what was left out, and why."""
    body = tuple((_shown(r.model), r.method or "–", r.benchmark, r.metric,
                  "–" if r.value is None else fmt_ci(r.value, r.ci), "–" if r.ideal is None else f"{r.ideal:g}",
                  "–" if r.n is None else str(r.n), str(r.n_left_out), r.left_out_reason or "–") for r in rows)
    table = Table("Headline results", ("model", "method", "benchmark", "metric", "value (%)", "ideal", "n",
                                        "left out", "why left out"), body,
                  notes=("n: units counted; left out: units of the benchmark not counted in n.",))
    return Section(key, "Headline results", tables=(table,), data={"results": [r.row() for r in rows]})


def mark_limited(report: Any, limit: int | None) -> Any:
    """A copy of a :class:`~stereoset_eval.analysis.report_model.Report` whose every table title says LIMITED RUN."""
    if not limit:
        return report
    sections = tuple(
        dataclasses.replace(s, tables=tuple(dataclasses.replace(t, title=table_title(t.title, limit)) for t in s.tables))
        for s in report.sections
    )
    return dataclasses.replace(report, title=table_title(report.title, limit), sections=sections,
                               results=tuple(result_rows(report, limit=limit)))


@dataclass(frozen=True)
class LeaderRow:
    """One model on the leaderboard: its headline numbers, mean distance from the ideal and rank."""

    model: str
    cells: Mapping[str, HeadlineResult]
    bias: float | None  # mean |value - ideal| over the ranked columns (None when a column is missing)
    rank: int | None


def _own_first(rows: Sequence[HeadlineResult]) -> HeadlineResult:
    """The row scored by the benchmark's own code if there is one, else the first."""
    return next((r for r in rows if r.own_method), rows[0])


def leaderboard(rows: Sequence[HeadlineResult]) -> tuple[list[str], list[LeaderRow]]:
    """(columns, one row per model): the results each benchmark puts on the leaderboard, and the rank.

    Per model and column (:attr:`HeadlineResult.leaderboard`: StereoSet ss and icat of both tasks,
    else of the one scored; CrowS-Pairs: metric.py's metric; curated pairs: pair ss) the result of
    the benchmark's own scoring method where the model has it, else of its first method. Rank: by
    the mean distance of the ranked columns from their ideal (50 for every built-in one; smaller =
    less stereotyped; equal distances at two decimals share a rank), among the models that have
    every column. The official StereoSet leaderboard ranks by icat, which is shown beside it.
    """
    picked: dict[str, dict[str, list[HeadlineResult]]] = {}
    ranked_columns: set[str] = set()
    for r in rows:
        if r.value is None or r.leaderboard is None:
            continue
        picked.setdefault(r.model, {}).setdefault(r.leaderboard, []).append(r)
        if r.ranked:
            ranked_columns.add(r.leaderboard)
    columns = list(dict.fromkeys(c for per in picked.values() for c in per))
    ss_cols = [c for c in columns if c in ranked_columns]
    out = []
    for model, per in picked.items():
        cells = {c: _own_first(rs) for c, rs in per.items()}
        distances = [abs(cells[c].value - (cells[c].ideal or 0.0)) for c in ss_cols  # type: ignore[operator]
                     if c in cells]
        bias = sum(distances) / len(distances) if len(distances) == len(ss_cols) and distances else None
        out.append(LeaderRow(model, cells, bias, None))
    ranked = sorted({round(r.bias, 2) for r in out if r.bias is not None})
    ranks = {}
    for b in ranked:  # competition ranking: 1, 2, 2, 4
        ranks[b] = 1 + sum(1 for r in out if r.bias is not None and round(r.bias, 2) < b)
    out = [LeaderRow(r.model, r.cells, r.bias, ranks.get(round(r.bias, 2)) if r.bias is not None else None)
           for r in out]
    out.sort(key=lambda r: (r.rank is None, r.rank or 0, r.model))
    return columns, out


LEADERBOARD_NOTE = ("rank: by the mean distance of the ss columns from the ideal 50 (smaller = less stereotyped), "
                    "among models with every column; per benchmark the method of its own reference code where "
                    "the model has it, else its first method; StereoSet's official leaderboard ranks by icat. A rank ignores "
                    "the intervals: where they overlap, the order is not established")


def leaderboard_table(rows: Sequence[HeadlineResult]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The leaderboard as (header, rows) of display strings (shared by the terminal and the report)."""
    columns, board = leaderboard(rows)
    header = ("rank", "model", *columns, "mean distance from 50")
    body = tuple(
        ("–" if r.rank is None else str(r.rank), _shown(r.model), *(_cell(r.cells.get(c)) for c in columns),
         "–" if r.bias is None else f"{r.bias:.2f}")
        for r in board
    )
    return header, body


def leaderboard_section(rows: Sequence[HeadlineResult]) -> Section:
    """The report's leaderboard (the same rows the terminal shows)."""
    header, body = leaderboard_table(rows)
    _, board = leaderboard(rows)
    return Section("leaderboard", "Leaderboard", tables=(Table("models ranked by distance from ss = 50", header, body),),
                   notes=(LEADERBOARD_NOTE,),
                   data={"rows": [{"model": r.model, "rank": r.rank, "mean_abs_ss_minus_50": r.bias,
                                   "cells": {c: {"value": v.value, "ci_low": v.ci_low, "ci_high": v.ci_high,
                                                 "method": v.method, "benchmark": v.benchmark, "metric": v.metric,
                                                 "n": v.n, "n_left_out": v.n_left_out}
                                             for c, v in r.cells.items()}} for r in board]})


def format_leaderboard(rows: Sequence[HeadlineResult], *, limit: int | None = None) -> str:
    """The leaderboard as a Markdown pipe table ('' for fewer than two models)."""
    header, body = leaderboard_table(rows)
    if len(body) < 2:
        return ""
    limit = limit if limit is not None else next((r.limit for r in rows if r.limit), None)
    return "\n".join([table_title("Leaderboard", limit), "", *_pipe_table(header, body, {1}), "", LEADERBOARD_NOTE])
