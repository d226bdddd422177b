"""The ``stereoset-eval`` command line.

Each subcommand lives in its own module under ``analysis/commands/`` exposing
``register(subparsers)``; this file only discovers them, so adding a command never touches
another command's code. Errors the toolkit raises on purpose print as one line
(``error: <file>, row N: <problem>``) with exit status 2; anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from stereoset_eval import __version__
from stereoset_eval.foundation.errors import StereosetEvalError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stereoset-eval",
        description="Load, curate, score and analyse stereotype-bias benchmarks (StereoSet, CrowS-Pairs).",
    )
    parser.add_argument("--version", action="version", version=f"stereoset-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    import stereoset_eval.cli.commands as commands

    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"stereoset_eval.cli.commands.{mod.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except StereosetEvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
