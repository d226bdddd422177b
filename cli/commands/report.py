"""``stereoset-eval report``: metrics with confidence intervals for one model, as JSON, Markdown and HTML.

Reads gold items (any loader format) and a score file (:mod:`stereoset_eval.foundation.score_file`:
the score file of ``stereoset-eval score``, official predictions JSON or CSV
``sentence_id,score``), computes the benchmark's metrics with seeded bootstrap intervals, and
writes ``report.json``, ``report.md``, ``report.html`` and ``results.json`` into ``--output``
(``--out`` is the same flag). The library behind it is
:func:`stereoset_eval.study.report_run.report_benchmark`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from stereoset_eval.cli.commands import _flags
from stereoset_eval.cli.commands._common import add_data_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="metrics + confidence intervals for one model -> report.json/.md/.html")
    add_data_args(p)
    p.add_argument(
        "--scores",
        type=Path,
        required=True,
        help="scores: official predictions JSON, CSV sentence_id,score, or the JSON of `stereoset-eval score`",
    )
    _flags.add_output(p, required=True, aliases=("--out",),
                      help="output folder (report.json, report.md, report.html, results.json); replaced as a whole, "
                           "and only if it is an earlier report output (--out: the same flag, its older name)")
    _flags.add_model(p, required=False, help="model id (default: from the score file's provenance)")
    _flags.add_revision(p, help="model revision (default: from the score file's provenance)")
    p.add_argument("--method", help="scoring method (default: from the score file's provenance)")
    _flags.add_report_options(p)
    p.set_defaults(func=run)


def request(args: argparse.Namespace) -> Any:
    """The :class:`~stereoset_eval.study.report_run.ReportRequest` the arguments ask for."""
    from stereoset_eval.study.report_run import ReportRequest

    return ReportRequest(benchmark=args.benchmark, scores=args.scores, output=args.output, data=args.data,
                         data_dir=args.data_dir, download=not args.no_download, model=args.model,
                         revision=args.revision, method=args.method, options=_flags.report_options_from_args(args))


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.cli.commands._results import show_results
    from stereoset_eval.study.report_run import report_benchmark, report_model

    outcome = report_benchmark(request(args))
    for kind, path in outcome.paths.items():  # results.json among them (written inside the report's set)
        print(f"wrote {kind:8s} {path}")
    show_results(outcome.report, args.output, title=f"Results — {report_model(outcome.report)}",
                 limit=outcome.limit, write=False)
    return 0
