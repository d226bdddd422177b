"""The flags that several commands share, defined once: one name, one help text, one default each.

``score``, ``report``, ``evaluate``, ``study`` and ``demo`` take their common options from here
(``--model``, ``--revision``, ``--output``, ``--limit``, ``--cache-dir``, ``--no-cache``,
``--no-progress``, ``--no-download``, ``--overwrite``) and the report's metric options from
:class:`~stereoset_eval.study.report_run.ReportOptions`, whose defaults they show; old spellings
stay as aliases (``report --out``).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from stereoset_eval.cli.arg_types import bounded_int
from stereoset_eval.foundation.outputs import output_path
from stereoset_eval.study.config_validate import MAX_LIMIT

LIMIT_HELP = ("only the first N items of each benchmark (StereoSet: per task) — a quick look, not a result; "
              "every table title says LIMITED RUN")


def add_model(p: argparse.ArgumentParser, *, required: bool = True, help: str | None = None) -> None:
    p.add_argument("--model", required=required, help=help or "hub id or local folder of a pretrained model")


def add_revision(p: argparse.ArgumentParser, *, help: str | None = None) -> None:
    p.add_argument("--revision", default=None, help=help or "hub revision (branch, tag or commit)")


def add_output(p: argparse.ArgumentParser, *, help: str, required: bool = False, aliases: tuple[str, ...] = ()) -> None:
    """``--output`` (every command that writes a folder); ``aliases``: older spellings kept working."""
    p.add_argument("--output", *aliases, dest="output", type=output_path, required=required, help=help)


def add_limit(p: argparse.ArgumentParser, *, help: str = LIMIT_HELP) -> None:
    p.add_argument("--limit", type=bounded_int(1, MAX_LIMIT), metavar="N", help=help)


def add_cache(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cache-dir", type=Path, default=None,
                   help="score cache folder (default: $STEREOSET_EVAL_CACHE or ~/.cache/stereoset-eval/scores)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")


def add_no_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def add_no_download(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-download", action="store_true",
                   help="use only files already in the data folder (the bundled data needs no download)")


def add_overwrite(p: argparse.ArgumentParser) -> None:
    p.add_argument("--overwrite", action="store_true",
                   help="replace the output folder even if it holds a different run (default: refuse)")


def add_report_options(p: argparse.ArgumentParser) -> None:
    """The report's metric options, with :class:`ReportOptions`' defaults."""
    from stereoset_eval.analysis.pair_metrics import MISSING_GROUP_RULES, TIE_RULES
    from stereoset_eval.foundation.items import STEREOSET_TASKS
    from stereoset_eval.study.report_run import ReportOptions

    d = ReportOptions()
    p.add_argument("--task", choices=STEREOSET_TASKS, help="StereoSet: report one task only")
    p.add_argument("--micro", action="store_true",
                   help="StereoSet: add the BMNE paper's micro variant (separate section)")
    p.add_argument("--ndigits", type=int, default=d.ndigits,
                   help=f"CrowS-Pairs: round scores before comparing (metric.py: {d.ndigits}); other benchmarks "
                        "never round")
    p.add_argument("--no-rounding", action="store_true", help="CrowS-Pairs: compare unrounded scores")
    p.add_argument("--balance-by", default=d.balance_by,
                   help="add balanced ss grouped by this item attribute (pairs default: dimension)")
    p.add_argument("--ties", choices=sorted(TIE_RULES), default=d.ties, help="tie rule of pair ss / balanced ss")
    p.add_argument(
        "--missing-group", choices=sorted(MISSING_GROUP_RULES), default=d.missing_group,
        help=f"items without a --balance-by value (pairs: without a dimension tag): {d.missing_group} (default, as "
             "a study's analysis.untagged: left out of pair ss and balanced ss, their number reported), own-group "
             "(weigh them as one group '(none)') or error",
    )
    p.add_argument("--bootstrap", type=int, default=d.bootstrap, metavar="N",
                   help=f"bootstrap resamples (default {d.bootstrap})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"bootstrap seed (default {d.seed})")
    p.add_argument("--ci-level", type=float, default=d.ci_level, help=f"confidence level (default {d.ci_level})")
    p.add_argument("--title", default=d.title, help="report title")


def report_options_from_args(args: argparse.Namespace) -> Any:
    """The :class:`ReportOptions` the flags of :func:`add_report_options` ask for."""
    from stereoset_eval.study.report_run import ReportOptions

    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(ReportOptions) if hasattr(args, f.name)}
    if getattr(args, "no_rounding", False):
        given["ndigits"] = None
    return ReportOptions(**given)
