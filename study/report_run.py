"""Report one model on one benchmark from its scores: the library behind ``stereoset-eval report``.

:func:`report_benchmark` reads gold items (any loader format) and a score file
(:mod:`stereoset_eval.foundation.score_file`), computes the benchmark's metrics with seeded
bootstrap intervals (:meth:`~stereoset_eval.analysis.benchmarks.Benchmark.evaluate`) and writes
``report.json``, ``report.md``, ``report.html`` and ``results.json`` as one set.
:class:`ReportOptions` holds every option that changes a number; its defaults are the
benchmark seam's (:class:`~stereoset_eval.analysis.benchmarks.EvaluationOptions`,
:class:`~stereoset_eval.analysis.bootstrap.BootstrapConfig`), and the CLI's flags take theirs from it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from stereoset_eval.analysis.benchmarks import EvaluationOptions, get_benchmark
from stereoset_eval.analysis.bootstrap import BootstrapConfig
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item


def _default(cls: type, name: str) -> Any:
    """The default of field ``name`` of dataclass ``cls`` (one source for every default)."""
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


@dataclass(frozen=True)
class ReportOptions:
    """Every option of a one-model report that changes a number (recorded in its provenance).

    Attributes:
        task: StereoSet: report one task only (None: both).
        micro: StereoSet: add the BMNE paper's micro variant (a section of its own).
        ndigits: CrowS-Pairs: round scores to this many decimals before comparing (metric.py: 3;
            None: compare unrounded scores); other benchmarks never round.
        balance_by: add balanced ss grouped by this item attribute (pairs default: dimension).
        ties: tie rule of pair ss / balanced ss.
        missing_group: items without a ``balance_by`` value: ``exclude`` (left out, counted),
            ``own-group`` or ``error``.
        bootstrap: bootstrap resamples.
        seed: bootstrap seed.
        ci_level: confidence level.
        title: the report's title (None: the default).
    """

    task: str | None = None
    micro: bool = _default(EvaluationOptions, "micro")
    ndigits: int | None = _default(EvaluationOptions, "ndigits")
    balance_by: str | None = _default(EvaluationOptions, "balance_by")
    ties: str = _default(EvaluationOptions, "ties")
    missing_group: str = _default(EvaluationOptions, "missing_group")
    bootstrap: int = _default(BootstrapConfig, "n_resamples")
    seed: int = _default(BootstrapConfig, "seed")
    ci_level: float = _default(BootstrapConfig, "level")
    title: str | None = None

    def bootstrap_config(self) -> BootstrapConfig:
        return BootstrapConfig(n_resamples=self.bootstrap, seed=self.seed, level=self.ci_level)

    def evaluation_options(self) -> EvaluationOptions:
        """The options of the benchmark's metrics."""
        return EvaluationOptions(bootstrap=self.bootstrap_config(), micro=self.micro, ndigits=self.ndigits,
                                 balance_by=self.balance_by, ties=self.ties, missing_group=self.missing_group)


@dataclass(frozen=True)
class ReportRequest:
    """One report: what ``stereoset-eval report`` takes, as one value.

    Attributes:
        benchmark: a registered benchmark name.
        scores: the score file (``score``'s JSON, official predictions JSON or CSV ``sentence_id,score``).
        output: the output folder (replaced as a whole, and only if it is an earlier report output).
        data: the gold data file; None: the benchmark's default file in ``data_dir``.
        data_dir: the data folder (None: ``$STEREOSET_EVAL_DATA`` or the user cache).
        download: fetch a missing default file.
        model / revision / method: override what the score file's provenance says.
        options: the metric options.
    """

    benchmark: str
    scores: Path
    output: Path
    data: Path | None = None
    data_dir: Path | None = None
    download: bool = True
    model: str | None = None
    revision: str | None = None
    method: str | None = None
    options: ReportOptions = field(default_factory=ReportOptions)


@dataclass(frozen=True)
class ReportOutcome:
    """What a report run produced: the Report, the files written (kind -> path) and the scores' ``--limit``."""

    report: Any
    paths: Mapping[str, Path]
    limit: int | None


def compute_results(items: Sequence[Item], scores: Mapping[str, float], benchmark: str, options: ReportOptions,
                    model: str) -> Any:
    """The benchmark's metrics with CIs, as ``ModelResults`` (the benchmark decides which)."""
    from stereoset_eval.analysis.report_build import ModelResults

    evaluation = get_benchmark(benchmark).evaluate(list(items), scores, options.evaluation_options())
    return ModelResults(model=model, evaluations=(evaluation,))


def report_model(report: Any) -> str:
    """The model a one-model report is about (from its provenance)."""
    model = report.provenance.get("model")
    model = model.get("id") if isinstance(model, Mapping) else model
    return str(model or report.title)


def report_benchmark(req: ReportRequest) -> ReportOutcome:
    """Compute and write the report ``req`` asks for."""
    from stereoset_eval.analysis.pair_metrics import untagged
    from stereoset_eval.analysis.report_build import build_report
    from stereoset_eval.analysis.report_flags import flags_section
    from stereoset_eval.analysis.report_sections import distribution_section
    from stereoset_eval.analysis.report_writer import write_report
    from stereoset_eval.analysis.results_table import mark_limited, report_limit
    from stereoset_eval.foundation.outputs import check_replaceable, output_folder
    from stereoset_eval.foundation.provenance import build_provenance
    from stereoset_eval.foundation.score_file import check_coverage, read_scores
    from stereoset_eval.study.benchmarks import limit_items, load_benchmark_items

    opts = req.options
    config = opts.bootstrap_config()  # bad options fail before any file is read
    check_replaceable(req.output, command="report")
    bench = get_benchmark(req.benchmark)
    data_path, items = load_benchmark_items(req.benchmark, req.data, req.data_dir, download=req.download)
    if opts.task:
        n_all, items = len(items), [i for i in items if i.task == opts.task]
        if not items:
            raise StereosetEvalError(f"{data_path}: no {opts.task} items (the file has {n_all} items of other tasks); "
                                     "nothing to report")
    score_file = read_scores(req.scores)
    command = (score_file.recorded or {}).get("command")
    if isinstance(command, Mapping) and command.get("limit"):  # `score --limit N`: the same first N items
        items = limit_items(items, int(command["limit"]))
    check_coverage(score_file, items, gold=str(data_path))
    sp = score_file.provenance  # typed; None when the file does not say what produced it
    model = req.model or (sp.model if sp else None) or Path(req.scores).stem
    revision = req.revision or (sp.revision if sp else None)
    method = req.method or (sp.method if sp else None)
    results = compute_results(items, score_file.scores, req.benchmark, opts, model)
    evaluation_options = opts.evaluation_options()
    by = bench.distribution_by(evaluation_options)
    extra = (distribution_section(items, by=by, benchmark=bench.title), flags_section(items, benchmark=bench.title))
    balanced_by = bench.balance_attribute(evaluation_options)
    options = {
        "benchmark": req.benchmark,
        "task": opts.task,
        "micro": opts.micro,
        # only a benchmark whose metric rounds records it (a pairs report never rounds)
        **({"ndigits": opts.ndigits} if bench.rounds_scores else {}),
        "balance_by": balanced_by,
        "ties": opts.ties,
        **({"missing_group": opts.missing_group,
            "untagged": len(untagged(items, balanced_by))} if balanced_by else {}),
        "score_format": score_file.format,
        "bootstrap": config.to_dict(),
    }
    provenance = build_provenance(
        data_files=[data_path],
        score_files=[req.scores],
        model=model,
        revision=revision,
        method=method,
        options=options,
        n_per_slice=results.n_per_slice(),
        scores_provenance=score_file.recorded,
    )
    limit = report_limit({"provenance": provenance})
    report = mark_limited(build_report(results, provenance, title=opts.title, extra=extra), limit)
    with output_folder(req.output, command="report") as tmp:
        written = write_report(report, tmp)
    paths = {kind: Path(req.output) / path.relative_to(tmp) for kind, path in written.items()}
    return ReportOutcome(report, paths, limit)
