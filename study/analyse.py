"""The study's numbers: metrics per job, then Spearman ρ across models within each protocol.

Per job (model, benchmark, method), the registered benchmark's own evaluation
(:meth:`stereoset_eval.analysis.benchmarks.base.Benchmark.evaluate`):

* StereoSet: the official lms / ss / icat (macro over target terms) with bootstrap CIs; the
  headline is the overall ss;
* CrowS-Pairs: metric.py's metric (scores rounded to ``crows_ndigits`` first) with CIs;
* curated pairs: pair ss (**pre**-balance) and balanced ss by ``balance_by`` (**post**-balance)
  with CIs, and the ss of each group (category).

Across models, within a protocol (one method per model kind): Table 4 (ρ between two
benchmarks, pre and post balance), Table 5 (ρ per category) and Table 6 (per model pre/post
scores, :func:`stereoset_eval.analysis.correlation.balance_table`). A ρ that cannot be computed (fewer than
three models, a benchmark giving every model the same value) is kept with its reason instead
of failing the study.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Mapping, Sequence

import pandas as pd

from stereoset_eval.analysis.benchmarks import Evaluation, EvaluationOptions
from stereoset_eval.analysis.bootstrap import BootstrapConfig
from stereoset_eval.analysis.correlation import BalanceTable, Correlation, CorrelationInputError, balance_table, spearman
from stereoset_eval.analysis.pair_metrics import BalancedSS
from stereoset_eval.analysis.results import MetricResult
from stereoset_eval.study.benchmarks import BenchmarkData
from stereoset_eval.study.config import AnalysisSpec, StudyConfig
from stereoset_eval.study.executors import JobResult
from stereoset_eval.study.plan import Job, protocol_method, protocols

PRE, POST, ALL = "pre", "post", "all"


@dataclass(frozen=True)
class JobMetrics:
    """The metrics of one job: its benchmark's :class:`~stereoset_eval.analysis.benchmarks.base.Evaluation`."""

    job: Job
    evaluation: Evaluation

    @property
    def pre(self) -> MetricResult:
        """The headline ss before balancing (StereoSet overall ss, CrowS metric, pair ss)."""
        return self.evaluation.headline

    @property
    def post(self) -> MetricResult | None:
        """Balanced ss (balanced benchmarks only)."""
        return self.evaluation.post

    @property
    def balanced(self) -> BalancedSS | None:
        return self.evaluation.balanced

    def categories(self) -> dict[str, float]:
        """ss per balancing group (balanced benchmarks only)."""
        return self.evaluation.categories()


def evaluation_options(spec: AnalysisSpec) -> EvaluationOptions:
    """The study's analysis settings as the benchmarks' evaluation options."""
    return EvaluationOptions(
        bootstrap=BootstrapConfig(n_resamples=spec.bootstrap, seed=spec.seed, level=spec.ci_level),
        ndigits=spec.crows_ndigits,
        balance_default=spec.balance_by,
        ties=spec.ties,
        missing_group="own-group" if spec.untagged in ("own-group", "exclude") else "error",
        pair_ss_section=False,  # the balanced section shows pair ss as its unbalanced row
    )


def job_metrics(result: JobResult, bench: BenchmarkData, spec: AnalysisSpec) -> JobMetrics:
    """Metrics with CIs of one job, as its benchmark computes them."""
    evaluation = bench.benchmark.evaluate(list(bench.items), result.scores, evaluation_options(spec), title=bench.name)
    return JobMetrics(result.job, evaluation)


@dataclass(frozen=True)
class Cell:
    """A Spearman ρ, or the reason it is undefined."""

    correlation: Correlation | None
    reason: str | None = None
    n: int = 0

    def to_dict(self) -> dict:
        return {"correlation": self.correlation.to_dict() if self.correlation else None, "reason": self.reason,
                "n": self.n}


@dataclass(frozen=True)
class Table6:
    """Per-model pre/post scores of two benchmarks; ``table`` holds both ρ unless they are undefined."""

    x: str
    y: str
    rows: pd.DataFrame
    table: BalanceTable | None
    reason: str | None = None


@dataclass(frozen=True)
class ProtocolAnalysis:
    """Everything computed across models within one protocol.

    Attributes:
        name / methods: the protocol and its method per model kind.
        scores: long table ``model, benchmark, method, stage, category, value, low, high``.
        pairs: the compared (x, y) benchmark pairs.
        table4: (x, y, stage) -> ρ between x and y across models.
        table5: (x, y, category) -> ρ of the category's ss.
        table6: (x, y) -> per-model pre/post scores with both ρ (balanced benchmarks only).
    """

    name: str
    methods: Mapping[str, str]
    scores: pd.DataFrame
    pairs: tuple[tuple[str, str], ...]
    table4: Mapping[tuple[str, str, str], Cell]
    table5: Mapping[tuple[str, str, str], Cell]
    table6: Mapping[tuple[str, str], Table6]


SCORE_COLUMNS = ["model", "benchmark", "method", "stage", "category", "value", "low", "high", "n"]


def _rows(m: JobMetrics) -> list[tuple]:
    j = m.job
    out = []
    for stage, r in ((PRE, m.pre), (POST, m.post)):
        if r is not None:
            out.append((j.model.name, j.benchmark, j.method, stage, ALL, r.value,
                        r.ci.low if r.ci else None, r.ci.high if r.ci else None, r.n))
    if m.balanced is not None:
        out += [(j.model.name, j.benchmark, j.method, PRE, g, s.ss, s.ci.low if s.ci else None,
                 s.ci.high if s.ci else None, s.n) for g, s in m.balanced.groups.items()]
    return out


def protocol_scores(metrics: Sequence[JobMetrics], config: StudyConfig, kinds: Mapping[str, str],
                    protocol: Mapping[str, str]) -> pd.DataFrame:
    """The long score table of the jobs a protocol selects (one method per model and benchmark)."""
    wanted = {(m.name, b.name): protocol_method(protocol, b, kinds[m.name])
              for m in config.models for b in config.benchmarks}
    rows = [r for jm in metrics if wanted.get((jm.job.model.name, jm.job.benchmark)) == jm.job.method
            for r in _rows(jm)]
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


def _cell(table: pd.DataFrame, x: str, y: str, stage: str, category: str, spec: AnalysisSpec,
          models: Sequence[str]) -> Cell:
    def values(bench: str) -> dict[str, float]:
        rows = table[(table.benchmark == bench) & (table.stage == stage) & (table.category == category)]
        return dict(zip(rows.model, rows.value))

    vx, vy = values(x), values(y)
    if not vx or not vy:
        which = x if not vx else y
        return Cell(None, f"no {stage}-balance {category!r} scores for {which}")
    common = [m for m in models if m in vx and m in vy]
    lacking = [m for m in models if m not in common and (m in vx or m in vy)]
    if lacking:
        return Cell(None, f"model(s) {lacking} lack a score on one side", len(common))
    try:
        c = spearman([vx[m] for m in common], [vy[m] for m in common], labels=common, x_name=x, y_name=y,
                     permutations=spec.permutations or None, seed=spec.seed)
    except CorrelationInputError as exc:
        return Cell(None, str(exc), len(common))
    return Cell(c, None, len(common))


def compared_pairs(config: StudyConfig) -> tuple[tuple[str, str], ...]:
    """``analysis.compare``, else every pair of benchmarks in config order."""
    if config.analysis.compare:
        return tuple(config.analysis.compare)
    return tuple(combinations([b.name for b in config.benchmarks], 2))


def analyse_protocol(name: str, protocol: Mapping[str, str], metrics: Sequence[JobMetrics], config: StudyConfig,
                     kinds: Mapping[str, str]) -> ProtocolAnalysis:
    spec = config.analysis
    table = protocol_scores(metrics, config, kinds, protocol)
    models = [m.name for m in config.models if m.name in set(table.model)]
    covered = set(table.benchmark)
    pairs = tuple((x, y) for x, y in compared_pairs(config) if x in covered and y in covered)
    t4: dict[tuple[str, str, str], Cell] = {}
    t5: dict[tuple[str, str, str], Cell] = {}
    t6: dict[tuple[str, str], Table6] = {}
    for x, y in pairs:
        t4[(x, y, PRE)] = _cell(table, x, y, PRE, ALL, spec, models)
        balanced = all(((table.benchmark == b) & (table.stage == POST)).any() for b in (x, y))
        if not balanced:
            continue
        t4[(x, y, POST)] = _cell(table, x, y, POST, ALL, spec, models)
        cats = [set(table[(table.benchmark == b) & (table.category != ALL)].category) for b in (x, y)]
        for cat in sorted(cats[0] & cats[1]):
            t5[(x, y, cat)] = _cell(table, x, y, PRE, cat, spec, models)
        t6[(x, y)] = _balance(table, x, y, spec, models)
    return ProtocolAnalysis(name, dict(protocol), table, pairs, t4, t5, t6)


def _balance(table: pd.DataFrame, x: str, y: str, spec: AnalysisSpec, models: Sequence[str]) -> Table6:
    overall = table[table.category == ALL]
    wide = overall.pivot_table(index="model", columns=["benchmark", "stage"], values="value", aggfunc="first")
    cols = {"x_pre": (x, PRE), "y_pre": (y, PRE), "x_post": (x, POST), "y_post": (y, POST)}
    have = [m for m in models if m in wide.index and all(pd.notna(wide.loc[m].get(c)) for c in cols.values())]
    rows = pd.DataFrame({"model": have, **{k: [float(wide.loc[m][c]) for m in have] for k, c in cols.items()}})
    for end in ("low", "high"):  # the CI bounds travel with the scores (error bars of Table 6's scatters)
        bounds = {(r.model, r.benchmark, r.stage): getattr(r, end) for r in overall.itertuples()}
        for k, (bench, stage) in cols.items():
            rows[f"{k}_{end}"] = [bounds.get((m, bench, stage)) for m in have]
    try:
        table = balance_table(rows, x_name=x, y_name=y, permutations=spec.permutations or None, seed=spec.seed)
    except CorrelationInputError as exc:
        return Table6(x, y, rows, None, str(exc))
    return Table6(x, y, rows, table)


@dataclass(frozen=True)
class StudyAnalysis:
    """Per-job metrics and the per-protocol correlation tables."""

    metrics: tuple[JobMetrics, ...]
    protocols: Mapping[str, ProtocolAnalysis]


def analyse(results: Sequence[JobResult], benchmarks: Mapping[str, BenchmarkData], config: StudyConfig,
            kinds: Mapping[str, str]) -> StudyAnalysis:
    """Metrics of every job, then the correlation tables of every protocol."""
    metrics = tuple(job_metrics(r, benchmarks[r.job.benchmark], config.analysis) for r in results)
    return StudyAnalysis(
        metrics=metrics,
        protocols={name: analyse_protocol(name, p, metrics, config, kinds) for name, p in protocols(config).items()},
    )
