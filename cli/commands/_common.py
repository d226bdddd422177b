"""Argument helpers shared by subcommands (data location, benchmark choice)."""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoset_eval.analysis.benchmarks import BENCHMARKS
from stereoset_eval.cli.commands._flags import add_no_download
from stereoset_eval.foundation.items import Item


def add_data_args(p: argparse.ArgumentParser, *, benchmark: bool = True) -> None:
    """``--benchmark`` (every registered benchmark, the BMNE release's included), ``--data``,
    ``--data-dir`` and ``--no-download``."""
    if benchmark:
        p.add_argument("--benchmark", required=True, choices=sorted(BENCHMARKS), help="benchmark to load")
    p.add_argument("--data", type=Path, help="data file (format detected); default: the manifest file in --data-dir")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA or ~/.cache/stereoset-eval/data)")
    add_no_download(p)


def resolve_data(benchmark: str, data: Path | None, data_dir: Path | None, *, download: bool = True) -> Path:
    """The file to load: ``--data`` if given, else the first manifest file found or fetched (the study's rule
    and its offline message, :func:`stereoset_eval.study.benchmarks.resolve_benchmark_file`)."""
    from stereoset_eval.study.benchmarks import resolve_benchmark_file

    if data is not None:
        return data
    return resolve_benchmark_file(benchmark, data_dir=data_dir, download=download)


def load_from_args(args: argparse.Namespace, benchmark: str | None = None) -> list[Item]:
    from stereoset_eval.study.benchmarks import load_benchmark_items

    _path, items = load_benchmark_items(benchmark or args.benchmark, args.data, args.data_dir,
                                        download=not getattr(args, "no_download", False))
    return items
