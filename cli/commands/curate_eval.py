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

from stereoset_eval.curation.risk_coverage import DEFAULT_THRESHOLDS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("curate-eval", help="agreement of a curated version with an expert gold annotation")
    p.add_argument("output", type=Path, help="a `stereoset-eval curate` output directory")
    p.add_argument("--gold", type=Path, required=True, help="gold CSV in the curation-gold schema")
    p.add_argument("--write", type=Path, help="directory for the tables (default OUTPUT/gold_eval; replaced)")
    p.add_argument("--folds", type=int, default=2, help="hash folds of the gold reported apart (default 2; 1 = none)")
    p.add_argument("--min-precision", nargs="+", type=float, default=list(DEFAULT_THRESHOLDS),
                   help=f"thresholds of the risk-coverage table (default {' '.join(map(str, DEFAULT_THRESHOLDS))})")
    p.add_argument("--cross-fit", type=int, default=5, metavar="K",
                   help="folds of the cross-fitted table on the gold (default 5; 0 = no cross-fitting)")
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


def risk_coverage_tables(output: Path, gold_path: Path, *, thresholds: list[float], k: int):
    """The calibration table (the run's estimates on gold items it did not review) and the cross-fitted one."""
    import json

    import pandas as pd

    from stereoset_eval.curation.record_io import read_records
    from stereoset_eval.curation.reliability import ReliabilityConfig
    from stereoset_eval.curation.reviewed import load_reviews
    from stereoset_eval.curation.risk_coverage import calibration_table, cross_fit_table, read_estimates
    from stereoset_eval.foundation.errors import StereosetEvalError

    records_path = output / "decision_records.jsonl"
    if not records_path.is_file():
        raise StereosetEvalError(f"{output}: no decision_records.jsonl (written by `curate` since rules 3.0): "
                                 "rerun curate to get the risk-coverage table")
    records = read_records(records_path)
    gold = load_reviews([gold_path])
    prov = json.loads((output / "provenance.json").read_text(encoding="utf-8"))
    config = ReliabilityConfig(**prov.get("routing", {}))
    reviewed_ids = set()
    pairs = pd.read_csv(output / "pairs.csv", dtype=str, keep_default_na=False)
    removed = pd.read_csv(output / "removed.csv", dtype=str, keep_default_na=False)
    for df, col in ((pairs, "id"), (removed, "item_id")):
        if "decided_by" in df.columns:
            reviewed_ids |= {str(i).split("#", 1)[0] for i, d in zip(df[col], df["decided_by"]) if d == "review"}
    tables = [calibration_table(records, read_estimates(output / "reliability.csv"), gold, reviewed=reviewed_ids,
                                config=config, thresholds=thresholds)]
    if k:
        tables.append(cross_fit_table(records, gold, k=k, config=config, thresholds=thresholds))
    return pd.concat([t for t in tables if not t.empty], ignore_index=True) if any(not t.empty for t in tables) \
        else pd.DataFrame()


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.curation.gold_eval import evaluate_output
    from stereoset_eval.curation.gold_report import write_report
    from stereoset_eval.curation.risk_coverage import summary_markdown
    from stereoset_eval.foundation.atomic import atomic_path

    report = evaluate_output(args.output, args.gold, folds=args.folds)
    print_report(report)
    table = risk_coverage_tables(args.output, args.gold, thresholds=args.min_precision, k=args.cross_fit)
    print("\nrisk-coverage (agreement measured on the gold; in brackets the estimate and n):")
    print(summary_markdown(table))
    dest = write_report(report, args.write or args.output / "gold_eval")
    if not table.empty:
        with atomic_path(dest / "risk_coverage.csv", suffix=".csv") as tmp:
            table.to_csv(tmp, index=False, lineterminator="\n")
    print(f"\n{len(report.disagreements)} disagreement(s) listed in {dest / 'disagreements.csv'}; "
          f"risk-coverage table in {dest / 'risk_coverage.csv'}")
    return 0
