"""The study report, laid out like the BMNE paper (Zakizadeh & Pilehvar 2025):

1. overview — models (id, revision, weights sha256), benchmarks (files, counts), jobs (cache hits);
2. the leaderboard and every headline result (as each benchmark gives them, with n and what was left out);
3. Table 4 — Spearman ρ between benchmarks across models, pre- and post-balance, per protocol;
4. Table 5 — ρ per stereotype category;
5. Table 6 — per model, pre- and post-balance ss of two benchmarks, with the ρ of each stage;
6. Figure 2 — the category distribution of each balanced benchmark;
7. per-benchmark ss with confidence intervals, one table per protocol;
8. details — every job's own section (StereoSet lms/ss/icat, CrowS summary, balanced ss).

Built from :mod:`stereoset_eval.analysis.report_model` parts, rendered by :func:`stereoset_eval.analysis.report_writer.write_report`.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any, Mapping, Sequence

from stereoset_eval.analysis.pair_metrics import NO_GROUP
from stereoset_eval.analysis.report_build import balance_table_section
from stereoset_eval.analysis.report_plots import benchmark_scatter
from stereoset_eval.analysis.report_model import Figure, Report, Section, Table, fmt
from stereoset_eval.analysis.report_flags import flags_section
from stereoset_eval.analysis.benchmarks import HeadlineContext
from stereoset_eval.analysis.results import HeadlineResult
from stereoset_eval.analysis.results_table import leaderboard_section, results_section
from stereoset_eval.study.analyse import ALL, POST, PRE, Cell, JobMetrics, StudyAnalysis, Table6
from stereoset_eval.study.benchmarks import BenchmarkData
from stereoset_eval.study.config import StudyConfig
from stereoset_eval.study.executors import JobResult
from stereoset_eval.study.plots import category_distribution

DASH = "–"


def section_key(*parts: str) -> str:
    """A section key usable as an HTML id: the parts joined by ``/``, whitespace turned into ``-``."""
    return re.sub(r"\s+", "-", "/".join(parts))


def _rho(cell: Cell | None, notes: list[str], label: str) -> tuple[str, str]:
    if cell is None:
        return DASH, DASH
    if cell.correlation is None:
        notes.append(f"{label}: undefined — {cell.reason}")
        return "undefined", DASH
    c = cell.correlation
    p = f"{c.p_value:.2g}" + ("" if c.permutation_p_value is None else f" (perm. {c.permutation_p_value:.2g})")
    return f"{c.rho:.3f}", p


def table4_section(analysis: StudyAnalysis) -> Section:
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for pname, pa in analysis.protocols.items():
        for x, y in pa.pairs:
            pre, post = pa.table4.get((x, y, PRE)), pa.table4.get((x, y, POST))
            n = max(c.n for c in (pre, post) if c is not None)
            rows.append((pname, f"{x} vs {y}", str(n), *_rho(pre, notes, f"{pname}, {x} vs {y}, pre"),
                         *_rho(post, notes, f"{pname}, {x} vs {y}, post")))
            data.setdefault(pname, {})[f"{x} vs {y}"] = {s: c.to_dict() for s, c in (("pre", pre), ("post", post)) if c}
    table = Table(
        title="Spearman ρ between benchmarks across models",
        columns=("protocol", "benchmarks", "n models", "ρ pre-balance", "p pre", "ρ post-balance", "p post"),
        rows=tuple(rows),
        notes=("pre-balance: each benchmark's headline ss (StereoSet: official intrasentence ss — a study scores "
               "intrasentence items only; CrowS-Pairs: metric.py "
               "metric; curated pairs: pair ss). post-balance: balanced ss (each pair weighs 1/size of its group); "
               f"{DASH} = the benchmark pair has no balanced scores.",
               "p: scipy.stats.spearmanr (t approximation), which is unreliable for few models (|ρ| = 1 gives "
               "p = 0 even for three); perm.: exact permutation p-value (scipy.stats.permutation_test, two-sided) "
               "when analysis.permutations ≥ n!.",),
    )
    figures = tuple(_table4_scatter(pname, pa, x, y, cell) for pname, pa in analysis.protocols.items()
                    for x, y in pa.pairs if (x, y) not in pa.table6
                    for cell in [pa.table4.get((x, y, PRE))] if cell is not None and cell.correlation is not None)
    if figures:
        notes.append("Scatters: pre-balance ss per model with its bootstrap CI on both axes, for the benchmark pairs "
                     "without a Table 6 (the balanced pairs' scatters are in their Table 6 sections).")
    return Section("table4", "Table 4 — cross-benchmark agreement: Spearman ρ across models, pre/post balance",
                   tables=(table,), figures=figures, notes=tuple(notes), data=data)


def _table4_scatter(pname: str, pa: Any, x: str, y: str, cell: Cell) -> Figure:
    """One benchmark pair's pre-balance scores across models, each with its CI on both axes."""
    c = cell.correlation
    assert c is not None
    t = pa.scores[(pa.scores.category == ALL) & (pa.scores.stage == PRE)]

    def cis(bench: str) -> list[tuple[float, float] | None]:
        bounds = {r.model: (r.low, r.high) for r in t[t.benchmark == bench].itertuples()}
        out: list[tuple[float, float] | None] = []
        for m in c.labels:
            lo, hi = bounds.get(m, (None, None))
            out.append(None if lo is None or hi is None or lo != lo or hi != hi else (float(lo), float(hi)))
        return out

    png = benchmark_scatter(c.x_values, c.y_values, c.labels, xlabel=f"{x} ss (%)", ylabel=f"{y} ss (%)",
                            title=f"{pname}: {x} vs {y}, {c.format()}", x_ci=cis(x), y_ci=cis(y))
    return Figure(f"{pname}: {x} vs {y}", png,
                  f"Scatter of {x} against {y} ss across {c.n} models (protocol {pname}) with confidence intervals")


def table5_section(analysis: StudyAnalysis) -> Section:
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    data: dict[str, Any] = {}
    for pname, pa in analysis.protocols.items():
        for (x, y, cat), cell in pa.table5.items():
            n = pa.scores[(pa.scores.category == cat) & pa.scores.benchmark.isin([x, y])]
            sizes = "/".join(str(int(n[n.benchmark == b].n.max())) if (n.benchmark == b).any() else "0" for b in (x, y))
            rows.append((pname, f"{x} vs {y}", cat, sizes, *_rho(cell, notes, f"{pname}, {x} vs {y}, {cat}")))
            data.setdefault(pname, {}).setdefault(f"{x} vs {y}", {})[cat] = cell.to_dict()
    table = Table(
        title="Spearman ρ across models, per stereotype category",
        columns=("protocol", "benchmarks", "category", "pairs (x/y)", "ρ", "p"),
        rows=tuple(rows),
        notes=("Per category: ρ between the two benchmarks' ss on that category's pairs only.",),
    )
    return Section("table5", "Table 5 — cross-benchmark agreement per category", tables=(table,),
                   notes=tuple(notes) if rows else ("No pair of balanced benchmarks to compare.",), data=data)


def table6_sections(analysis: StudyAnalysis) -> list[Section]:
    out = []
    for pname, pa in analysis.protocols.items():
        for (x, y), bt in pa.table6.items():
            key = section_key("table6", pname, f"{x} vs {y}")
            title = f"Table 6 — {x} vs {y}, pre/post balance per model (protocol {pname})"
            if bt.table is None:
                out.append(_table6_undefined(bt, key, title))
                continue
            sec = balance_table_section(bt.table, key=key)
            out.append(dataclasses.replace(sec, title=title, data={"protocol": pname, **sec.data}))
    return out


def _table6_undefined(t6: Table6, key: str, title: str) -> Section:
    """Table 6 whose ρ cannot be computed: the per-model scores still matter."""
    rows = tuple((str(r.model), fmt(r.x_pre), fmt(r.y_pre), fmt(r.x_post), fmt(r.y_post)) for r in t6.rows.itertuples())
    table = Table(f"{t6.x} vs {t6.y}: pre- and post-balance ss per model",
                  ("model", f"{t6.x} pre", f"{t6.y} pre", f"{t6.x} post", f"{t6.y} post"), rows)
    return Section(key, title, tables=(table,), notes=(f"Spearman ρ undefined — {t6.reason}",),
                   data={"x": t6.x, "y": t6.y, "rows": t6.rows.to_dict(orient="records"), "reason": t6.reason})


def figure2_section(benchmarks: Mapping[str, BenchmarkData], by: str) -> Section:
    counts = {name: dict(Counter(NO_GROUP if getattr(i, by, None) in (None, "") else str(getattr(i, by))
                                 for i in b.items))
              for name, b in benchmarks.items() if b.benchmark.balanced_by_default}
    if not counts:
        return Section("figure2", f"Figure 2 — distribution by {by}", notes=("No curated (balanced) benchmark.",))
    cats = sorted({c for per in counts.values() for c in per})
    rows = tuple((c, *(f"{per.get(c, 0)} ({100.0 * per.get(c, 0) / sum(per.values()):.1f}%)"
                       for per in counts.values())) for c in cats)
    png = category_distribution(counts, title=f"Items per {by} in each benchmark", xlabel=by)
    return Section(
        "figure2", f"Figure 2 — {by} distribution per benchmark",
        tables=(Table(f"items per {by}", (by, *counts), rows),),
        figures=(Figure(f"{by} distribution", png, f"Grouped bar chart of the share of items per {by} in "
                        f"{', '.join(counts)}"),),
        notes=("Unbalanced ss weighs every pair equally, so it mostly measures the largest categories; "
               "balanced ss gives each category the same weight.",),
        data={"by": by, "counts": counts},
    )


def _ci_text(value: float, low: Any, high: Any) -> str:
    text = f"{value:.2f}"
    return text if low is None or low != low else f"{text} [{low:.2f}, {high:.2f}]"


def scores_sections(analysis: StudyAnalysis, config: StudyConfig) -> list[Section]:
    out = []
    level = f"{config.analysis.ci_level:.0%}"
    for pname, pa in analysis.protocols.items():
        t = pa.scores[pa.scores.category == ALL]
        cols = [(b.name, stage) for b in config.benchmarks for stage in (PRE, POST)
                if ((t.benchmark == b.name) & (t.stage == stage)).any()]
        rows = []
        for m in config.models:
            cells = []
            for bench, stage in cols:
                r = t[(t.model == m.name) & (t.benchmark == bench) & (t.stage == stage)]
                cells.append(DASH if r.empty else _ci_text(*r[["value", "low", "high"]].iloc[0]))
            methods = sorted(set(t[t.model == m.name].method))
            rows.append((m.name, ", ".join(methods) or DASH, *cells))
        headers = tuple(f"{b} {'ss' if s == PRE else 'balanced ss'}" for b, s in cols)
        table = Table(f"ss (%) per model with {level} bootstrap CIs — protocol {pname}",
                      ("model", "method(s)", *headers), tuple(rows),
                      notes=("Ideal 50 for every column. StereoSet: official intrasentence ss (macro over target terms; "
                             "a study scores intrasentence items only); "
                             "CrowS-Pairs: metric.py metric; curated: pair ss and balanced ss.",))
        out.append(Section(section_key("scores", pname), f"Stereotype scores per model — protocol {pname}", tables=(table,),
                           data={"protocol": pname, "methods": dict(pa.methods),
                                 "scores": pa.scores.to_dict(orient="records")}))
    return out


def detail_sections(metrics: Sequence[JobMetrics]) -> list[Section]:
    out = []
    for jm in metrics:
        j = jm.job
        label = f"{j.model.name} · {j.method}"
        for i, sec in enumerate(jm.evaluation.sections(model=label)):
            key = section_key("detail", j.benchmark, j.model.name, j.method) + (f"/{i}" if i else "")
            out.append(dataclasses.replace(sec, key=key, title=f"Details — {sec.title}"))
    return out


def overview_section(config: StudyConfig, benchmarks: Mapping[str, BenchmarkData], results: Sequence[JobResult],
                     kinds: Mapping[str, str], executor: Mapping[str, Any]) -> Section:
    first: dict[str, Any] = {}
    for r in results:
        first.setdefault(r.job.model.name, r.provenance.get("model", {}))
    models = tuple((m.name, m.id, str(first.get(m.name, {}).get("revision") or m.revision or DASH), kinds[m.name],
                    str(first.get(m.name, {}).get("weights_sha256") or DASH)[:16]) for m in config.models)
    benches = tuple((b.name, b.spec.source + (f" of {b.spec.origin}" if b.spec.origin else ""),
                     ", ".join(p.name for p in b.files), ", ".join(f"{k} {v}" for k, v in b.counts.items()))
                    for b in benchmarks.values())
    jobs = tuple((r.job.model.name, r.job.benchmark, r.job.method, str(len(r.scores)), str(r.cache_stats.get("hits")),
                  str(r.cache_stats.get("computed")), f"{r.wall_time_s:.1f}") for r in results)
    hits = sum(r.cache_stats.get("hits", 0) for r in results)
    computed = sum(r.cache_stats.get("computed", 0) for r in results)
    notes = [f"Executor: {executor.get('name')}. Scores: {hits} sentences read from the cache, {computed} computed."]
    notes += [f"SKIPPED benchmark {name}: {reason}" for name, reason in config.skipped]
    if config.limit:
        notes.append(f"LIMITED RUN: only the first {config.limit} items of each benchmark were scored — "
                     "a quick look, not a result.")
    return Section(
        "overview", "Study overview",
        tables=(Table("models", ("model", "id", "revision", "kind", "weights sha256 (prefix)"), models),
                Table("benchmarks", ("benchmark", "source", "file(s)", "items"), benches),
                Table("scoring jobs", ("model", "benchmark", "method", "sentences", "cache hits", "computed",
                                       "seconds"), jobs)),
        notes=tuple(notes),
        data={"executor": dict(executor), "cache": {"hits": hits, "computed": computed},
              "benchmarks": {n: dict(b.counts) for n, b in benchmarks.items()}},
    )


def headline_results(analysis: StudyAnalysis, config: StudyConfig) -> list[HeadlineResult]:
    """Every job's headline results, as its benchmark gives them (model by its study name)."""
    return [r for jm in analysis.metrics
            for r in jm.evaluation.headline_results(HeadlineContext(model=jm.job.model.name, method=jm.job.method,
                                                                    model_id=jm.job.model.id, limit=config.limit))]


def build_study_report(config: StudyConfig, benchmarks: Mapping[str, BenchmarkData], results: Sequence[JobResult],
                       analysis: StudyAnalysis, kinds: Mapping[str, str], executor: Mapping[str, Any],
                       provenance: Mapping[str, Any]) -> Report:
    """The whole report (see the module docstring for its layout)."""
    details = detail_sections(analysis.metrics)
    rows = headline_results(analysis, config)
    sections = [overview_section(config, benchmarks, results, kinds, executor),
                leaderboard_section(rows), results_section(rows), table4_section(analysis),
                table5_section(analysis), *table6_sections(analysis),
                figure2_section(benchmarks, config.analysis.balance_by), *scores_sections(analysis, config),
                *(flags_section(b.items, benchmark=name) for name, b in benchmarks.items()),
                *details]  # details last: the HTML folds them at the end
    return Report(title=config.title, sections=tuple(sections), provenance=provenance, results=tuple(rows))
