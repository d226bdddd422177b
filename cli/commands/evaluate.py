"""``stereoset-eval evaluate --model M``: score and report StereoSet and CrowS-Pairs in one command.

For each benchmark it runs ``stereoset-eval score`` (the model's default methods, the result
cache) and then ``stereoset-eval report`` with its defaults (seeded bootstrap CIs), into
``OUTPUT/stereoset/`` and ``OUTPUT/crows-pairs/`` (``scores/`` and ``report/`` each), then prints
one results table and writes ``OUTPUT/results.json``. The benchmark data is bundled, so only the
model may need the network. Default ``OUTPUT``: ``runs/evaluate/<model>``, with ``-limit-N`` for
``--limit N`` runs (a quick look, marked LIMITED RUN in every table title).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from stereoset_eval.cli.commands._runs import limited_folder
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_flags
from stereoset_eval.foundation.errors import StereosetEvalError

BENCHMARKS = ("stereoset", "crows-pairs")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("evaluate", help="score + report StereoSet and CrowS-Pairs for one model in one shot",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="hub id or local folder of a pretrained model")
    p.add_argument("--revision", help="hub revision (branch, tag or commit)")
    p.add_argument("--limit", type=int, metavar="N",
                   help="only the first N items of each benchmark (StereoSet: per task) — a quick look, not a result")
    p.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS),
                   help="benchmarks to evaluate (default: both)")
    p.add_argument("--output", type=Path, help="output folder (default runs/evaluate/<model>[-limit-N])")
    p.add_argument("--data-dir", type=Path, help="data folder with your own files (default: the bundled data)")
    add_run_settings_args(p)  # --device, --dtype, --batch-tokens, --last-layer, --allocator (passed to score)
    p.add_argument("--cache-dir", type=Path, default=None, help="result cache folder (default $STEREOSET_EVAL_CACHE)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--overwrite", action="store_true", help="replace the output even if it holds a different run")
    p.set_defaults(func=run)


def default_output(model: str, limit: int | None) -> Path:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model.rstrip("/").split("/")[-1] if model.startswith((".", "/", "~"))
                  else model.replace("/", "__"))
    return Path(limited_folder(Path("runs") / "evaluate" / name, limit))


def _parse(command: str, argv: list[str]) -> argparse.Namespace:
    from stereoset_eval.cli.commands import report, score

    parser = argparse.ArgumentParser(prog=f"stereoset-eval {command}", add_help=False)
    {"score": score, "report": report}[command].register(parser.add_subparsers())
    return parser.parse_args([command, *argv])


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.analysis.report_json import report_to_json
    from stereoset_eval.analysis.results_table import format_table, result_rows, results_json
    from stereoset_eval.cli.commands.report import make_report
    from stereoset_eval.cli.commands.score import score_run
    from stereoset_eval.foundation.atomic import atomic_write_text
    from stereoset_eval.scoring.hub import check_models

    import json

    if args.limit is not None and args.limit < 1:
        raise StereosetEvalError(f"--limit {args.limit}: give a positive number of items")
    out = args.output or default_output(args.model, args.limit)
    check_models([(args.model, args.revision)], say=lambda msg: print(msg, file=sys.stderr))
    common = (["--data-dir", str(args.data_dir)] if args.data_dir else [])
    rows = []
    for bench in args.benchmarks:
        folder = out / bench
        argv = ["--benchmark", bench, "--model", args.model, "--output", str(folder / "scores"), *common,
                *run_settings_flags(args)]
        argv += ["--revision", args.revision] if args.revision else []
        argv += ["--cache-dir", str(args.cache_dir)] if args.cache_dir else []
        argv += ["--limit", str(args.limit)] if args.limit else []
        argv += [flag for flag, on in (("--no-cache", args.no_cache), ("--no-progress", args.no_progress),
                                       ("--overwrite", args.overwrite)) if on]
        print(f"== {bench}: scoring", file=sys.stderr, flush=True)
        _, results, _, _, _ = score_run(_parse("score", argv), results_table=False)  # the report has them
        task = ["--task", next(iter(results))] if bench == "stereoset" and len(results) == 1 else []
        report_argv = ["--benchmark", bench, "--scores", str(folder / "scores" / "scores.json"), "--out",
                       str(folder / "report"), *common, *task]
        report, paths, limit = make_report(_parse("report", report_argv))
        rows += result_rows(json.loads(report_to_json(report)), limit=limit)
        for kind, path in paths.items():
            print(f"wrote {kind:8s} {path}")
    results_path = atomic_write_text(out / "results.json", results_json(rows))
    print()
    print(format_table(rows, title=f"Results — {args.model}", limit=args.limit))
    print()
    print(f"wrote results  {results_path}")
    return 0
