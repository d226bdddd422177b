"""``stereoset-eval evaluate --model M``: score and report several benchmarks in one command.

For each benchmark (default: those whose data ships with the package, StereoSet and CrowS-Pairs;
any registered one, the BMNE release's ``bmne-stereoset`` and ``bmne-crowspairs`` included) it
scores with the model's default methods through the result cache and reports with the report's
defaults (seeded bootstrap CIs), into ``OUTPUT/<benchmark>/`` (``scores/`` and ``report/`` each),
then prints one results table and writes ``OUTPUT/results.json``. Default ``OUTPUT``:
``runs/evaluate/<model>``, with ``-limit-N`` for ``--limit N`` runs (a quick look, marked LIMITED
RUN in every table title). The library behind it is :func:`stereoset_eval.evaluate`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stereoset_eval.analysis.benchmarks import BENCHMARKS
from stereoset_eval.cli.commands import _flags
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="score + report StereoSet and CrowS-Pairs (or any benchmarks) for one model",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _flags.add_model(p)
    _flags.add_revision(p)
    _flags.add_limit(p)
    p.add_argument("--benchmarks", "--benchmark", dest="benchmarks", nargs="+", choices=sorted(BENCHMARKS),
                   metavar="BENCHMARK",
                   help="benchmarks to evaluate (default: those with bundled data, StereoSet and CrowS-Pairs; "
                        f"any of {', '.join(sorted(BENCHMARKS))}; --benchmark: the same flag, score's spelling)")
    _flags.add_output(p, help="output folder (default runs/evaluate/<model>[-limit-N])")
    p.add_argument("--data-dir", type=Path, help="data folder with your own files (default: the bundled data)")
    _flags.add_no_download(p)
    add_run_settings_args(p)  # --device, --dtype, --batch-tokens, --last-layer, --allocator
    _flags.add_cache(p)
    _flags.add_no_progress(p)
    _flags.add_overwrite(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.study.evaluate_api import evaluate

    result = evaluate(args.model, benchmarks=args.benchmarks, limit=args.limit, settings=run_settings_from_args(args),
                      output=args.output, revision=args.revision, data_dir=args.data_dir,
                      download=not args.no_download, cache_dir=args.cache_dir, use_cache=not args.no_cache,
                      progress=not args.no_progress, overwrite=args.overwrite,
                      log=lambda msg: print(msg, file=sys.stderr, flush=True))
    for run_ in result.runs.values():
        for kind, path in run_.report.paths.items():
            print(f"wrote {kind:8s} {path}")
    print()
    print(result.table())
    print()
    print(f"wrote results  {result.results_path}")
    return 0
