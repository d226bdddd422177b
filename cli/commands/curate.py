"""``stereoset-eval curate``: write a curated, versioned gender-swap pair dataset.

Example (one command, both benchmarks)::

    stereoset-eval curate --benchmark stereoset --data stereoset_dev_ids_ptbr_llm.csv \\
        --benchmark crows-pairs --data crows_pairs_anonymized.csv --bias-type gender --output out/

``--benchmark`` and ``--data`` pair up in order; without ``--data`` the manifest file of the
benchmark is used (``--data-dir``). The library call is :func:`stereoset_eval.curation.pipeline.curate_files`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stereoset_eval.cli.commands._common import resolve_data
from stereoset_eval.cli.commands._judge_args import add_judge_arguments, build_judge
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.outputs import check_replaceable, output_path



def curatable() -> tuple[str, ...]:
    """The benchmarks whose items the curation pipeline reads (the registry's ``curatable`` ones)."""
    from stereoset_eval.analysis.benchmarks.registry import BENCHMARKS

    return tuple(name for name, b in BENCHMARKS.items() if b.curatable)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("curate", help="curate gender items into harmonised gender-swap pairs (dataset + card + tables)")
    p.add_argument("--benchmark", action="append", required=True,
                   help="benchmark to curate (a curatable benchmark of the registry: stereoset-eval ls benchmarks); "
                        "repeat to curate several into one version")
    p.add_argument("--data", action="append", type=Path,
                   help="data file for the benchmark at the same position (default: manifest file)")
    p.add_argument("--data-dir", type=Path, help="data directory for manifest files")
    p.add_argument("--bias-type", default="gender", help="bias type to curate (only 'gender' is supported)")
    p.add_argument("--output", type=output_path, required=True,
                   help="output directory (replaced as a whole, and only if it is an earlier curate output)")
    p.add_argument("--min-words", type=int, default=4, help="too_short threshold in words (default 4)")
    p.add_argument("--near-duplicate-jaccard", type=float, default=0.8,
                   help="near_duplicate word-set Jaccard threshold (default 0.8)")
    p.add_argument("--remove-below-words", type=int, default=5,
                   help="short_template: remove a pair with a sentence under this many words (default 5)")
    p.add_argument("--partners", choices=("swap", "keep"), default="swap",
                   help="target-only swap: swap the target's partner with it (default) or keep the partner")
    p.add_argument("--no-validity", action="store_true",
                   help="keep every attribute instance (no evidence-based validity/direction decisions)")
    add_judge_arguments(p)
    p.add_argument("--gold", type=Path,
                   help="expert gold CSV (curation-gold schema): agreement goes on the card and into OUTPUT/gold_eval/")
    add_routing_arguments(p)
    p.set_defaults(func=run)


def add_routing_arguments(p: argparse.ArgumentParser) -> None:
    """The reviewed items and the routing parameters (defaults from ReliabilityConfig)."""
    from stereoset_eval.curation.reliability import UNMEASURED_POLICIES, ReliabilityConfig

    d = ReliabilityConfig()
    p.add_argument("--reviewed", nargs="+", type=Path, default=[], metavar="FILE",
                   help="items a person decided: a curation-gold CSV or an `annotate merge` folder (several allowed); "
                        "applied as they are (decided_by=review) and every rule's reliability is estimated from them")
    p.add_argument("--min-precision", type=float, default=d.min_precision,
                   help=f"decide automatically only where every rule's reliability lower bound reaches this "
                        f"(default {d.min_precision}); everything else goes to review")
    p.add_argument("--confidence-level", type=float, default=d.confidence,
                   help=f"one-sided level of the reliability lower bound (default {d.confidence})")
    p.add_argument("--prior-strength", type=float, default=d.prior_strength,
                   help=f"pseudo-observations of a rule family's pooled agreement in a judgement rule's prior "
                        f"(default {d.prior_strength})")
    p.add_argument("--mechanical-prior", type=float, default=d.mechanical_prior,
                   help=f"prior mean agreement of a mechanical rule (default {d.mechanical_prior})")
    p.add_argument("--mechanical-prior-strength", type=float, default=d.mechanical_prior_strength,
                   help=f"pseudo-observations of that prior (default {d.mechanical_prior_strength})")
    p.add_argument("--unmeasured", choices=sorted(UNMEASURED_POLICIES), default=d.unmeasured,
                   help="rules with no measured reliability: 'mechanical' = mechanical rules decide, judgement "
                        f"rules go to review; 'review' = none decides (default {d.unmeasured})")


def routing_config(args: argparse.Namespace):
    from stereoset_eval.curation.reliability import ReliabilityConfig

    return ReliabilityConfig(min_precision=args.min_precision, confidence=args.confidence_level,
                             prior_strength=args.prior_strength, mechanical_prior=args.mechanical_prior,
                             mechanical_prior_strength=args.mechanical_prior_strength, unmeasured=args.unmeasured)


def run(args: argparse.Namespace) -> int:
    from stereoset_eval.curation.card import dataset_card
    from stereoset_eval.curation.export import write_curation
    from stereoset_eval.curation.pipeline import CurationConfig, curate_files
    from stereoset_eval.curation.rules import RULES_VERSION, RuleConfig

    check_replaceable(args.output, command="curate")  # refuse before any work
    known = curatable()
    unknown = [b for b in args.benchmark if b not in known]
    if unknown:
        raise StereosetEvalError(f"--benchmark {unknown[0]!r} cannot be curated; curatable: {', '.join(known)}")
    data = list(args.data or [])
    if len(data) > len(args.benchmark):
        raise StereosetEvalError(f"{len(data)} --data files for {len(args.benchmark)} --benchmark values")
    inputs = [(b, data[i] if i < len(data) else resolve_data(b, None, args.data_dir))
              for i, b in enumerate(args.benchmark)]
    from stereoset_eval.curation.validity import ValidityConfig

    config = CurationConfig(bias_type=args.bias_type,
                            rules=RuleConfig(min_words=args.min_words, near_duplicate_jaccard=args.near_duplicate_jaccard,
                                             remove_below_words=args.remove_below_words),
                            validity=ValidityConfig(enabled=not args.no_validity), partners=args.partners,
                            reliability=routing_config(args))
    judge = build_judge(args)
    try:
        result = curate_files(inputs, config=config, judge=judge, reviewed=args.reviewed)
    finally:
        close = getattr(judge, "close", None)
        if close is not None:
            close()  # the chat judge's response cache
    version = f"{'+'.join(args.benchmark)}-{args.bias_type}-rules{RULES_VERSION}"
    report = gold_section = None
    if args.gold is not None:
        from stereoset_eval.curation.export import pairs_frame
        from stereoset_eval.curation.gold_eval import evaluate, load_gold
        from stereoset_eval.curation.gold_report import gold_markdown

        report = evaluate(pairs_frame(result.items, result.applied.decided), result.removed_table(), load_gold(args.gold))
        gold_section = gold_markdown(report, gold_name=args.gold.name)
    out = write_curation(result, args.output, card=dataset_card(result, version=version, gold=gold_section),
                         gold_report=report)
    kind = result.provenance.get("output_kind", "automatic curation")
    print(f"{kind}: {len(result.items)} pairs from {len(result.pairs)} source pairs -> {out}")
    print(result.counts.to_string(index=False))
    print("\ncoverage (items decided without a person, of those no person reviewed):")
    for ds, row in result.coverage().items():
        print(f"  {ds}: {row['automatic']} automatic, {row['needs_review']} need review, {row['reviewed']} reviewed; "
              f"coverage {row['coverage']:.1%}; estimated agreement of the automatic decisions: "
              f"item {row['estimated_item']:.3f}, instance {row['estimated_instance']:.3f}, "
              f"pair text {row['estimated_text']:.3f}, dimension {row['estimated_dimension']:.3f}")
    print(f"review queue: {len(result.review_items())} candidates in {out / 'review_items.jsonl'}")
    if not result.items and not args.reviewed:
        print("no pair was decided automatically: without reviewed items only mechanical rules decide (removals). "
              "Review the queue (stereoset-eval annotate push --items …/review_items.jsonl) and pass the merge "
              "with --reviewed; --min-precision 0 --unmeasured decide writes every suggestion as a draft.")
    removed = result.removed_table()
    print(f"\nleft out: {len(removed)} (see {out / 'removed.csv'})")
    print("\nrules (source pairs):")
    print(result.rule_summary[["rule", "kind", "effect", "flagged", "share", "overlap", "failures"]].to_string(index=False))
    if report is not None:
        from stereoset_eval.cli.commands.curate_eval import print_report

        print(f"\nagreement with {args.gold}:")
        print_report(report)
    if result.failures:
        print(f"warning: {len(result.failures)} rule failure(s); first: {result.failures[0]}", file=sys.stderr)
    return 0
