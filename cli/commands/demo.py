"""``stereoset-eval demo``: the main job a new user runs first (``make demo``).

It is ``stereoset-eval study`` on the packaged default study (``data/default_study.toml``):
bert-base-uncased, roberta-base and gpt2 on StereoSet (intrasentence, dev), CrowS-Pairs, the
BMNE release (skipped with a note when unavailable) and the gender pairs curated from each
original, scored through the cache and reported with the cross-benchmark Spearman tables. Every option of ``study`` can override the default
(``--models``, ``--data-dir``, ``--output``, ``--limit`` …); ``--config`` runs another file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from stereoset_eval.cli.commands.study import add_study_args, apply_overrides, execute
from stereoset_eval.study.config import default_config, load_config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="the default study: curate -> score -> report (the `make demo` job)",
                       description="Run the packaged default study (bert-base-uncased, roberta-base, gpt2 on "
                                   "StereoSet, CrowS-Pairs, the BMNE release when available, and this toolkit's "
                                   "curated gender pairs) and write its report.")
    p.add_argument("--config", type=Path, help="study file to run instead of the packaged data/default_study.toml")
    add_study_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config) if args.config else default_config()
    return execute(apply_overrides(config, args), args)
