"""``stereoset-eval report``: metrics with confidence intervals for one model, as JSON, Markdown and HTML.

Reads gold items (any loader format) and a score file (:mod:`stereoset_eval.foundation.score_file`:
the score file of ``stereoset-eval score``, official predictions JSON or CSV
``sentence_id,score``), computes the
benchmark's metrics with seeded bootstrap intervals, and writes ``report.json``,
``report.md`` and ``report.html`` into ``--out``. The library behind it is
:func:`stereoset_eval.analysis.report_build.build_report` + :func:`stereoset_eval.analysis.report_writer.write_report`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Mapping

from stereoset_eval.analysis.benchmarks import EvaluationOptions, get_benchmark
from stereoset_eval.analysis.bootstrap import BootstrapConfig
from stereoset_eval.cli.commands._common import add_data_args, limit_items, resolve_data
from stereoset_eval.analysis.pair_metrics import MISSING_GROUP_RULES, TIE_RULES, untagged
from stereoset_eval.foundation.score_file import check_coverage, read_scores
from stereoset_eval.foundation.provenance import build_provenance
from stereoset_eval.analysis.report_build import ModelResults, build_report
from stereoset_eval.analysis.report_flags import flags_section
from stereoset_eval.analysis.report_sections import distribution_section
from stereoset_eval.analysis.report_writer import write_report
from stereoset_eval.analysis.results_table import mark_limited, report_limit
from stereoset_eval.cli.commands._results import show_results
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.outputs import check_replaceable, output_folder, output_path
from stereoset_eval.foundation.items import STEREOSET_TASKS, Item


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="metrics + confidence intervals for one model -> report.json/.md/.html")
    add_data_args(p)
    p.add_argument(
        "--scores",
        type=Path,
        required=True,
        help="scores: official predictions JSON, CSV sentence_id,score, or the JSON of `stereoset-eval score`",
    )
    p.add_argument("--out", type=output_path, required=True,
                   help="output folder (report.json, report.md, report.html); replaced as a whole, and only if it "
                        "is an earlier report output")
    p.add_argument("--model", help="model id (default: from the score file's provenance)")
    p.add_argument("--revision", help="model revision (default: from the score file's provenance)")
    p.add_argument("--method", help="scoring method (default: from the score file's provenance)")
    p.add_argument("--task", choices=STEREOSET_TASKS, help="StereoSet: report one task only")
    p.add_argument(
        "--micro", action="store_true", help="StereoSet: add the BMNE paper's micro variant (separate section)"
    )
    p.add_argument("--ndigits", type=int, default=3,
                   help="CrowS-Pairs: round scores before comparing (metric.py: 3); other benchmarks never round")
    p.add_argument("--no-rounding", action="store_true", help="CrowS-Pairs: compare unrounded scores")
    p.add_argument("--balance-by", help="add balanced ss grouped by this item attribute (pairs default: dimension)")
    p.add_argument("--ties", choices=sorted(TIE_RULES), default="anti", help="tie rule of pair ss / balanced ss")
    p.add_argument(
        "--missing-group",
        choices=sorted(MISSING_GROUP_RULES),
        default="exclude",
        help="items without a --balance-by value (pairs: without a dimension tag): exclude (default, as a study's "
             "analysis.untagged: left out of pair ss and balanced ss, their number reported), own-group (weigh "
             "them as one group '(none)') or error",
    )
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--ci-level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--title", help="report title")
    p.set_defaults(func=run)


def default_args(benchmark: str) -> argparse.Namespace:
    """This command's defaults for ``benchmark`` (what `score` and `evaluate` report with)."""
    parser = argparse.ArgumentParser(add_help=False)
    register(parser.add_subparsers())
    return parser.parse_args(["report", "--benchmark", benchmark, "--scores", "-", "--out", "-"])


def evaluation_options(args: argparse.Namespace) -> EvaluationOptions:
    """The options of the benchmark's metrics from the command line."""
    return EvaluationOptions(
        bootstrap=bootstrap_config(args),
        micro=args.micro,
        ndigits=None if args.no_rounding else args.ndigits,
        balance_by=args.balance_by,
        ties=args.ties,
        missing_group=args.missing_group,
    )


def compute_results(
    items: list[Item], scores: Mapping[str, float], benchmark: str, args: argparse.Namespace, model: str
) -> ModelResults:
    """The benchmark's metrics with CIs, as :class:`ModelResults` (the benchmark decides which)."""
    evaluation = get_benchmark(benchmark).evaluate(items, scores, evaluation_options(args))
    return ModelResults(model=model, evaluations=(evaluation,))


def bootstrap_config(args: argparse.Namespace) -> BootstrapConfig:
    return BootstrapConfig(n_resamples=args.bootstrap, seed=args.seed, level=args.ci_level)


def run(args: argparse.Namespace) -> int:
    report, paths, limit = make_report(args)
    for kind, path in paths.items():  # results.json among them (written inside the report's set)
        print(f"wrote {kind:8s} {path}")
    show_results(report, args.out, title=f"Results — {report_model(report)}", limit=limit, write=False)
    return 0


def report_model(report) -> str:
    """The model a one-model report is about (from its provenance)."""
    model = report.provenance.get("model")
    model = model.get("id") if isinstance(model, Mapping) else model
    return str(model or report.title)


def make_report(args: argparse.Namespace):
    """Compute and write the report the arguments ask for: (Report, written paths, the run's --limit)."""
    config = bootstrap_config(args)  # bad options fail before any file is read
    check_replaceable(args.out, command="report")
    bench = get_benchmark(args.benchmark)
    data_path = resolve_data(args.benchmark, args.data, args.data_dir)
    items = bench.load(data_path)
    if args.task:
        n_all, items = len(items), [i for i in items if i.task == args.task]
        if not items:
            raise StereosetEvalError(f"{data_path}: no {args.task} items (the file has {n_all} items of other tasks); "
                                     "nothing to report")
    score_file = read_scores(args.scores)
    command = (score_file.recorded or {}).get("command")
    if isinstance(command, Mapping) and command.get("limit"):  # `score --limit N`: the same first N items
        items = limit_items(items, int(command["limit"]))
    check_coverage(score_file, items, gold=str(data_path))
    sp = score_file.provenance  # typed; None when the file does not say what produced it
    model = args.model or (sp.model if sp else None) or args.scores.stem
    revision = args.revision or (sp.revision if sp else None)
    method = args.method or (sp.method if sp else None)
    results = compute_results(items, score_file.scores, args.benchmark, args, model)
    by = bench.distribution_by(evaluation_options(args))
    extra = (distribution_section(items, by=by, benchmark=bench.title), flags_section(items, benchmark=bench.title))
    balanced_by = bench.balance_attribute(evaluation_options(args))
    options = {
        "benchmark": args.benchmark,
        "task": args.task,
        "micro": args.micro,
        # only a benchmark whose metric rounds records it (a pairs report never rounds)
        **({"ndigits": None if args.no_rounding else args.ndigits} if bench.rounds_scores else {}),
        "balance_by": balanced_by,
        "ties": args.ties,
        **({"missing_group": args.missing_group,
            "untagged": len(untagged(items, balanced_by))} if balanced_by else {}),
        "score_format": score_file.format,
        "bootstrap": config.to_dict(),
    }
    provenance = build_provenance(
        data_files=[data_path],
        score_files=[args.scores],
        model=model,
        revision=revision,
        method=method,
        options=options,
        n_per_slice=results.n_per_slice(),
        scores_provenance=score_file.recorded,
    )
    limit = report_limit({"provenance": provenance})
    report = mark_limited(build_report(results, provenance, title=args.title, extra=extra), limit)
    with output_folder(args.out, command="report") as tmp:
        written = write_report(report, tmp)
    paths = {kind: args.out / path.relative_to(tmp) for kind, path in written.items()}
    return report, paths, limit
