"""``stereoset-eval score``: score a benchmark with a language model, write scores + provenance.

Examples::

    stereoset-eval score --model bert-base-uncased --benchmark stereoset --data dev.json --output out/
    stereoset-eval score --model gpt2 --benchmark crows-pairs --method causal-ll --output out/
    stereoset-eval score --model roberta-base --benchmark stereoset --option leading_space=bias-bench ...

StereoSet: intrasentence items are scored with ``--method`` and intersentence items with
``--inter-method``. Defaults follow the model: a masked LM gets ``stereoset-mlm`` and, if the
checkpoint has a next-sentence head, ``stereoset-nsp`` (otherwise intersentence is skipped
and the provenance says so); a causal LM gets ``stereoset-causal`` and ``stereoset-inter-causal``.
CrowS-Pairs / pairs / the BMNE release: ``crows-nangia`` for masked LMs, ``causal-ll`` for causal LMs.

Writes ``scores.csv``, ``scores.json``, ``provenance.json``, for StereoSet
``predictions.json`` in the official predictions format, and ``results.json`` (the metrics of
``stereoset-eval report``'s defaults) — one set, swapped in whole. The library behind it is
:func:`stereoset_eval.study.score_run.score_benchmark`; torch is imported only when run.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stereoset_eval.cli.commands import _flags
from stereoset_eval.cli.commands._common import add_data_args
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args
from stereoset_eval.scoring.methods import METHODS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score benchmark sentences with a language model (cached, resumable)")
    add_data_args(p)
    _flags.add_model(p)
    p.add_argument("--method", choices=sorted(METHODS), help="method (StereoSet: for intrasentence items)")
    p.add_argument("--inter-method", choices=sorted(METHODS), help="StereoSet intersentence method")
    p.add_argument("--skip-intra", action="store_true", help="StereoSet: do not score intrasentence items")
    p.add_argument("--skip-inter", action="store_true", help="StereoSet: do not score intersentence items")
    p.add_argument("--option", action="append", default=[], metavar="[METHOD:]NAME=VALUE",
                   help="method option (repeatable); VALUE is JSON (true, 3, null) or a plain string")
    _flags.add_output(p, required=True,
                      help="output folder (replaced as a whole, and only if it is an earlier score output)")
    add_run_settings_args(p)  # --device, --dtype, --batch-tokens, --last-layer, --allocator
    _flags.add_revision(p)
    _flags.add_cache(p)
    _flags.add_no_progress(p)
    _flags.add_limit(p, help="score only the first N items (StereoSet: per task) — a quick look, not a result")
    _flags.add_overwrite(p)
    p.set_defaults(func=run)


def request(args: argparse.Namespace) -> Any:
    """The :class:`~stereoset_eval.study.score_run.ScoreRequest` the arguments ask for."""
    from stereoset_eval.study.score_run import ScoreRequest

    return ScoreRequest(
        model=args.model, benchmark=args.benchmark, output=args.output, data=args.data, data_dir=args.data_dir,
        download=not args.no_download, method=args.method, inter_method=args.inter_method,
        skip_intra=args.skip_intra, skip_inter=args.skip_inter, options=tuple(args.option),
        settings=run_settings_from_args(args), revision=args.revision, cache_dir=args.cache_dir,
        use_cache=not args.no_cache, progress=not args.no_progress, limit=args.limit, overwrite=args.overwrite,
    )


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.study.score_run import score_benchmark

    outcome = score_benchmark(request(args), log=lambda msg: print(msg, file=sys.stderr, flush=True))
    for path in outcome.paths:
        print(path)
    if outcome.report is not None:
        from stereoset_eval.cli.commands._results import show_results

        show_results(outcome.report, args.output, title=f"Results — {args.model} on {args.benchmark} "
                     f"(stereoset-eval report defaults)", limit=args.limit, write=False)
    return 0
