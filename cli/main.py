"""The ``stereoset-eval`` command line.

Each subcommand lives in its own module under ``cli/commands/`` exposing
``register(subparsers)``; this file only discovers them, so adding a command never touches
another command's code. Every fault ends in one line (``error: <file>, row N: <problem>``)
with exit status 2 (:mod:`stereoset_eval.cli.faults`: errors raised on purpose, and OS,
SQLite, safetensors, tokenizer and Label Studio faults); ``--debug`` adds the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import traceback
from typing import NoReturn, Sequence

from stereoset_eval import __version__
from stereoset_eval.cli.faults import EXIT_ERROR, describe, quiet_stdout


class _Parser(argparse.ArgumentParser):
    """argparse with its usage errors as the one ``error:`` line every other fault gets."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        self.exit(EXIT_ERROR, f"error: {self.prog}: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stereoset-eval",
        description="Load, curate, score and analyse stereotype-bias benchmarks (StereoSet, CrowS-Pairs).",
    )
    parser.add_argument("--version", action="version", version=f"stereoset-eval {__version__}")
    parser.add_argument("--debug", action="store_true", help="on an error, print the traceback too")
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
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # accepted anywhere on the line, not only before the subcommand
    parser = build_parser()
    args = parser.parse_args([a for a in argv if a != "--debug"])
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, inside the boundary, not at interpreter exit
        return status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the error boundary: one line, exit 2
        if isinstance(exc, BrokenPipeError):
            quiet_stdout()
        if debug:
            traceback.print_exc()
        try:
            print(f"error: {describe(exc)}", file=sys.stderr, flush=True)
        except OSError:
            pass
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
