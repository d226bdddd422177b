"""``stereoset-eval curate-eval OUT --gold FILE``: agreement of a curate output with an expert gold.

Reads ``OUT/pairs.csv`` and ``OUT/removed.csv`` and a gold file in the ``curation-gold`` schema
(``../shared/data/curation-gold/gold_dev.csv``); prints item / instance / dimension κ, the
exact-pair rate and counts per benchmark (and per hash fold), and writes the tables and every
disagreement with the rule that decided it to ``--write`` (default ``OUT/gold_eval``). The
library call is :func:`stereoset_eval.curation.gold_eval.evaluate_output`.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("curate-eval", help="agreement of a curated version with an expert gold annotation")
    p.add_argument("output", type=Path, help="a `stereoset-eval curate` output directory")
    p.add_argument("--gold", type=Path, required=True, help="gold CSV in the curation-gold schema")
    p.add_argument("--write", type=Path, help="directory for the tables (default OUTPUT/gold_eval; replaced)")
    p.add_argument("--folds", type=int, default=2, help="hash folds of the gold reported apart (default 2; 1 = none)")
    p.set_defaults(func=run)


def print_report(report) -> None:
    from stereoset_eval.curation.gold_report import disagreement_kinds

    print(report.table.set_index("dataset").T.to_string())
    if not report.per_fold.empty:
        print("\nper fold:")
        print(report.per_fold.set_index(["fold", "dataset"]).T.to_string())
    for d, c in report.confusion.items():
        print(f"\ndimension confusion, {d} (rows gold, columns ours):")
        print(c.to_string())
    print("\nlargest kinds of disagreement:")
    print(disagreement_kinds(report).to_string(index=False))


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.curation.gold_eval import evaluate_output
    from stereoset_eval.curation.gold_report import write_report

    report = evaluate_output(args.output, args.gold, folds=args.folds)
    print_report(report)
    dest = write_report(report, args.write or args.output / "gold_eval")
    print(f"\n{len(report.disagreements)} disagreement(s) listed in {dest / 'disagreements.csv'}")
    return 0
