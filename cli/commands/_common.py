"""Argument helpers shared by subcommands (data location, benchmark choice)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoset_eval.analysis.benchmarks import BENCHMARKS, get_benchmark
from stereoset_eval.curation.loaders.download import fetch
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item


def add_data_args(p: argparse.ArgumentParser, *, benchmark: bool = True) -> None:
    if benchmark:
        p.add_argument("--benchmark", required=True, choices=sorted(BENCHMARKS), help="benchmark to load")
    p.add_argument("--data", type=Path, help="data file (format detected); default: the manifest file in --data-dir")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA or ~/.cache/stereoset-eval/data)")


def resolve_data(benchmark: str, data: Path | None, data_dir: Path | None) -> Path:
    """The file to load: ``--data`` if given, else the first manifest file found or fetched."""
    if data is not None:
        return data
    errors = []
    names = get_benchmark(benchmark).default_files  # manifest names tried in order
    for name in names:  # local files first, no download
        try:
            return fetch(name, data_directory=data_dir, download=False)
        except StereosetEvalError as exc:
            errors.append(str(exc))
    for name in names[:1]:
        try:
            return fetch(name, data_directory=data_dir, download=True)
        except StereosetEvalError as exc:
            errors.append(str(exc))
    raise StereosetEvalError(f"no data for {benchmark}: " + "; ".join(errors))


def load_from_args(args: argparse.Namespace, benchmark: str | None = None) -> list[Item]:
    bench = benchmark or args.benchmark
    return get_benchmark(bench).load(resolve_data(bench, args.data, args.data_dir))


def limit_items(items: list[Item], limit: int | None) -> list[Item]:
    """The first ``limit`` items in file order; StereoSet: per task (so both tasks stay in).

    The same selection in ``score --limit`` and in ``report`` on its scores.
    """
    if not limit:
        return items
    seen: dict[str | None, int] = {}
    out = []
    for it in items:
        key = it.task if it.task in ("intrasentence", "intersentence") else None
        if seen.get(key, 0) < limit:
            seen[key] = seen.get(key, 0) + 1
            out.append(it)
    return out
