"""``stereoset-eval study CONFIG.toml``: score many models on several benchmarks, then correlate.

Reads a study file (see ``data/default_study.toml`` and the README), scores every (model,
benchmark, method) job through the result cache — locally or on a Ray cluster — and writes
report.json / report.md / report.html with the cross-benchmark Spearman tables. The library
behind it is :func:`stereoset_eval.study.run_study`; ``stereoset-eval demo`` is the same command on
the packaged default study.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from stereoset_eval.cli.commands import _flags
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args
from stereoset_eval.study.config import ModelSpec, StudyConfig, load_config, replace_config
from stereoset_eval.study.evaluate_api import limited_folder
from stereoset_eval.study.executors import make_executor


def add_study_args(p: argparse.ArgumentParser) -> None:
    """Overrides shared by ``study`` and ``demo`` (each replaces the config's value)."""
    p.add_argument("--models", nargs="+", metavar="MODEL",
                   help="models to study instead of the config's: hub ids or local folders, each optionally "
                        "NAME=ID and/or ID@REVISION")
    _flags.add_output(p, help="report folder (default: the config's study.output); replaced as a whole, and only if "
                              "it is an earlier study output")
    p.add_argument("--data-dir", type=Path,
                   help="benchmark data folder (default: $STEREOSET_EVAL_DATA or ~/.cache/stereoset-eval/data)")
    _flags.add_no_download(p)
    _flags.add_limit(p, help="score only the first N items of each benchmark (a quick look, not a result; default "
                             "output: the config's folder + '-limit-N', and every table title says LIMITED RUN)")
    _flags.add_cache(p)
    add_run_settings_args(p, from_config=True)  # --device, --dtype, --batch-tokens, --last-layer, --allocator
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: models one after another in this process (default); ray: one Ray task per "
                        "(model, benchmark, method)")
    p.add_argument("--ray-address", metavar="ADDRESS",
                   help="connect to this Ray cluster (auto, ray://host:10001 …) instead of starting a local one")
    p.add_argument("--ray-num-cpus", type=int, metavar="N", help="CPUs of the local Ray instance (default: all)")
    p.add_argument("--quiet", action="store_true", help="print only the written files and the results tables")
    _flags.add_no_progress(p)
    _flags.add_overwrite(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="many models x benchmarks x methods -> cross-benchmark correlation report",
                       description="Score every (model, benchmark, method) of a study file through the cache "
                                   "(locally or on Ray) and write report.json/.md/.html with Spearman tables.")
    p.add_argument("config", type=Path, help="study file (TOML), e.g. a copy of data/default_study.toml")
    add_study_args(p)
    p.set_defaults(func=run)


def parse_model(text: str) -> ModelSpec:
    """``ID``, ``NAME=ID``, ``ID@REVISION`` or ``NAME=ID@REVISION`` (a local folder never splits at @)."""
    name, _, model = text.rpartition("=") if "=" in text else ("", "", text)
    revision = None
    if "@" in model and not Path(model).expanduser().exists():
        model, _, revision = model.rpartition("@")
    default = Path(model).name if Path(model).expanduser().exists() else model
    return ModelSpec(id=model, name=name or default, revision=revision or None)


def apply_overrides(config: StudyConfig, args: argparse.Namespace) -> StudyConfig:
    changes: dict[str, Any] = {}
    if args.models:
        changes["models"] = tuple(parse_model(m) for m in args.models)
    if args.output is not None:
        changes["output"] = str(args.output)
    elif args.limit:
        changes["output"] = limited_folder(config.output, args.limit)  # never over a full run
    if args.data_dir is not None:
        changes["data_dir"] = str(args.data_dir)
    if args.no_download:
        changes["download"] = False
    if args.limit is not None:
        changes["limit"] = args.limit
    if args.cache_dir is not None:
        changes["cache_dir"] = str(args.cache_dir)
    if args.no_cache:
        changes["use_cache"] = False
    named = sorted(changes)
    run = run_settings_from_args(args, base=config.run)
    if run != config.run:
        changes["run"] = run
        named += [f"study.{k}" for k, v in run.to_dict().items() if v != getattr(config.run, k)]
    return replace_config(config, **changes, source=f"{config.source} (command-line overrides: {named})") \
        if changes else config


def execute(config: StudyConfig, args: argparse.Namespace) -> int:
    """Run the study with the executor the arguments choose; print progress, files and Table 4."""
    from stereoset_eval.analysis.report_markdown import markdown_table
    from stereoset_eval.cli.commands._results import show_results
    from stereoset_eval.study.run import run_study

    from stereoset_eval.scoring.hub import check_models

    log = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    check_models([(m.id, m.revision) for m in config.models], say=lambda msg: print(msg, file=sys.stderr))
    executor = make_executor(args.executor, address=args.ray_address, num_cpus=args.ray_num_cpus,
                             progress=not (args.no_progress or args.quiet))
    run = run_study(config, executor=executor, log=log, overwrite=args.overwrite)
    stats = run.cache_stats
    print(f"scores: {stats['hits']} sentences from the cache, {stats['computed']} computed")
    for kind, path in run.paths.items():
        print(f"wrote {kind:12s} {path}")
    results = show_results(run.report, Path(run.paths["json"]).parent, write=False, title=f"Results — {config.title}",
                           limit=config.limit)
    print(f"wrote {'results':12s} {results}")
    if len(config.models) >= 3:  # Spearman across models is undefined below three
        table4 = next(s for s in run.report.sections if s.key == "table4")
        print()
        print(markdown_table(table4.tables[0]))
        for note in table4.notes:
            print(f"_{note}_")
    else:
        print("(cross-benchmark Spearman ρ needs at least 3 models: not shown)")
    print(f"\nfull report: {run.paths['html']}")
    return 0


def run(args: argparse.Namespace) -> int:
    return execute(apply_overrides(load_config(args.config), args), args)
