"""``evaluate(model)``: score and report several benchmarks for one model in one call (lm-eval's ``simple_evaluate``).

For each benchmark it scores with the model's default methods through the result cache
(:func:`~stereoset_eval.study.score_run.score_benchmark`) and reports with the report's defaults
(:func:`~stereoset_eval.study.report_run.report_benchmark`, seeded bootstrap CIs), into
``OUTPUT/<benchmark>/scores/`` and ``OUTPUT/<benchmark>/report/``, then writes one
``OUTPUT/results.json``. ``stereoset-eval evaluate`` is this function behind a parser; it is
re-exported as :func:`stereoset_eval.evaluate`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.analysis.benchmarks import BENCHMARKS, get_benchmark
from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.study.benchmarks import resolve_benchmark_file
from stereoset_eval.study.report_run import ReportOptions, ReportOutcome, ReportRequest, report_benchmark
from stereoset_eval.study.score_run import ScoreOutcome, ScoreRequest, check_limit, score_benchmark

Log = Callable[[str], None]
#: a benchmark's methods: one name (its first part's) or one per part in order (None: the default)
Methods = Mapping[str, "str | Sequence[str | None]"]


def default_benchmarks() -> tuple[str, ...]:
    """The benchmarks ``evaluate`` runs when none are named: those whose default data file ships with
    the package (so only the model may need the network), in registry order."""
    from stereoset_eval.curation.loaders.download import bundled_path

    return tuple(name for name, b in BENCHMARKS.items() if any(bundled_path(f) for f in b.default_files))


def limited_folder(folder: str | Path, limit: int | None) -> str:
    """The default folder of a ``--limit N`` run: ``runs/demo`` -> ``runs/demo-limit-N`` (never a full run's)."""
    return str(folder) if not limit else f"{str(folder).rstrip('/')}-limit-{limit}"


def default_output(model: str, limit: int | None) -> Path:
    """``runs/evaluate/<model>`` (``-limit-N`` for a limited run)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.rstrip("/").split("/")[-1] if model.startswith((".", "/", "~"))
                  else model.replace("/", "__"))
    return Path(limited_folder(Path("runs") / "evaluate" / name, limit))


@dataclass(frozen=True)
class BenchmarkRun:
    """One benchmark of an evaluation: its scores and its report."""

    benchmark: str
    scores: ScoreOutcome
    report: ReportOutcome


@dataclass(frozen=True)
class EvaluationResult:
    """What :func:`evaluate` returns.

    Attributes:
        model: the model evaluated.
        output: the output folder.
        limit: the ``limit`` of the run (None: every item — a result; else a quick look).
        runs: benchmark name -> its :class:`BenchmarkRun`, in the order evaluated.
        rows: the headline rows (model, method, benchmark, metric, value, CI, n, ideal), as
            ``results.json`` holds them.
        results_path: ``OUTPUT/results.json``.
    """

    model: str
    output: Path
    limit: int | None
    runs: Mapping[str, BenchmarkRun]
    rows: tuple[Any, ...]
    results_path: Path
    settings: RunSettings = field(default_factory=RunSettings)

    def table(self) -> str:
        """The lm-eval-style results table (every title of a limited run says LIMITED RUN)."""
        from stereoset_eval.analysis.results_table import format_table

        return format_table(self.rows, title=f"Results — {self.model}", limit=self.limit)

    def value(self, benchmark: str, metric: str) -> float:
        """The value of ``metric`` in the first row whose benchmark starts with ``benchmark`` (a row's
        benchmark is the report's name for it: ``StereoSet intrasentence``, ``CrowS-Pairs`` …)."""
        for row in self.rows:
            if row.benchmark.startswith(benchmark) and row.metric == metric:
                return float(row.value)
        raise KeyError(f"no {metric!r} row for {benchmark!r}; rows: {sorted({(r.benchmark, r.metric) for r in self.rows})}")


def _part_methods(benchmark: str, methods: Methods | None) -> tuple[str | None, str | None]:
    given = (methods or {}).get(benchmark)
    if given is None or isinstance(given, str):
        return given, None
    listed = list(given) + [None, None]
    return listed[0], listed[1]


def evaluate(
    model: str,
    benchmarks: Sequence[str] | None = None,
    methods: Methods | None = None,
    limit: int | None = None,
    settings: RunSettings | None = None,
    *,
    output: str | Path | None = None,
    revision: str | None = None,
    data_dir: str | Path | None = None,
    download: bool = True,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    progress: bool = False,
    overwrite: bool = False,
    report: ReportOptions | None = None,
    log: Log | None = None,
) -> EvaluationResult:
    """Score and report ``benchmarks`` for ``model``; write every file; return the typed results.

    Args:
        model: hub id or local folder of a pretrained model.
        benchmarks: registered benchmark names (None: :func:`default_benchmarks`, StereoSet and
            CrowS-Pairs).
        methods: benchmark -> method of its first part, or a sequence with one per part (StereoSet:
            intrasentence, intersentence); left out: the reference code's method for the model's kind.
        limit: only the first N items of each benchmark (StereoSet: per task) — a quick look, not a result.
        settings: device, dtype, batching (None: ``RunSettings()``).
        output: the output folder (None: ``runs/evaluate/<model>[-limit-N]``).
        revision: hub revision of the model.
        data_dir: data folder (None: ``$STEREOSET_EVAL_DATA``, else the bundled data).
        download: fetch a missing default file (the BMNE release); False: files already present only.
        cache_dir / use_cache: the result cache.
        progress: show a progress bar per part.
        overwrite: replace output folders that hold a different run.
        report: the report's options (None: the report's defaults).
        log: called with one line per step (None: silent).
    """
    from stereoset_eval.analysis.results_table import result_rows, results_json
    from stereoset_eval.foundation.atomic import atomic_write_text
    from stereoset_eval.scoring.hub import check_models

    say = log or (lambda _msg: None)
    check_limit(limit)
    names = tuple(benchmarks) if benchmarks else default_benchmarks()
    for name in names:
        get_benchmark(name)  # an unknown name fails before any scoring, listing the known ones
    settings = (settings or RunSettings()).validate()
    out = Path(output) if output is not None else default_output(model, limit)
    check_models([(model, revision)], say=say)
    opts = report or ReportOptions()
    paths = dict(data_dir=Path(data_dir) if data_dir is not None else None,
                 cache_dir=Path(cache_dir) if cache_dir is not None else None)
    for name in names:  # every data file found (or fetched) before any scoring: the study's offline message
        resolve_benchmark_file(name, data_dir=paths["data_dir"], download=download)
    runs: dict[str, BenchmarkRun] = {}
    rows: list[Any] = []
    for name in names:
        folder = out / name
        method, inter_method = _part_methods(name, methods)
        say(f"== {name}: scoring")
        scored = score_benchmark(ScoreRequest(
            model=model, benchmark=name, output=folder / "scores", data_dir=paths["data_dir"], download=download,
            method=method, inter_method=inter_method, settings=settings, revision=revision,
            cache_dir=paths["cache_dir"], use_cache=use_cache, progress=progress, limit=limit, overwrite=overwrite,
        ), results_table=False, log=say)  # the report has them
        bench = get_benchmark(name)
        task = opts.task
        if task is None and len(bench.score_methods) > 1 and len(scored.results) == 1:
            task = next(iter(scored.results))  # one part scored (no NSP head): report that one
        reported = report_benchmark(ReportRequest(
            benchmark=name, scores=folder / "scores" / "scores.json", output=folder / "report",
            data_dir=paths["data_dir"], download=download, options=_with_task(opts, task)))
        rows += result_rows(reported.report, limit=reported.limit)  # the benchmark's typed headline results
        runs[name] = BenchmarkRun(name, scored, reported)
    results_path = atomic_write_text(out / "results.json", results_json(rows))
    return EvaluationResult(model, out, limit, runs, tuple(rows), results_path, settings)


def _with_task(opts: ReportOptions, task: str | None) -> ReportOptions:
    import dataclasses

    return opts if task == opts.task else dataclasses.replace(opts, task=task)
