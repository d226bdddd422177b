"""``stereoset-eval evaluate-predictions``: the official StereoSet evaluation of a predictions file.

Equivalent to ``python evaluation.py --gold-file G --predictions-file P`` (moinnadeem/StereoSet),
with strict input checks: every gold sentence needs a score and every scored id must be a
gold sentence (missing / unknown ids are listed), scores must be finite.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from stereoset_eval.foundation.score_file import check_coverage, read_official_predictions
from stereoset_eval.foundation.provenance import ToolInfo, file_sha256, utc_timestamp
from stereoset_eval.analysis.stereoset_metrics import StereoSetEvaluation, evaluate_stereoset
from stereoset_eval.foundation.atomic import atomic_write_json
from stereoset_eval.analysis.benchmarks import get_benchmark

COUNT_LABELS = {
    "true": "Count = true number of examples in the scope",
    "official": (
        "Count = evaluation.py-compatible: 3 x examples per bias type (its loop appends each example once per "
        "sentence), examples for task 'overall' and 'overall'; 'Examples' holds the true counts"
    ),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate-predictions", help="official StereoSet lms/ss/icat of a predictions JSON (evaluation.py)"
    )
    p.add_argument("--gold", type=Path, required=True, help="StereoSet gold data with sentence ids (any loader format)")
    p.add_argument(
        "--predictions",
        type=Path,
        required=True,
        help='official predictions JSON: {"intrasentence": [{"id", "score"}], "intersentence": [...]}',
    )
    p.add_argument("--output", type=Path, help="write the results JSON (official nesting) here")
    p.add_argument(
        "--official-count",
        action="store_true",
        help="write evaluation.py's Count (3 x examples per bias type) instead of true example counts",
    )
    p.set_defaults(func=run)


def results_document(evaluation: StereoSetEvaluation, *, count: str, gold: Path, predictions: Path) -> dict[str, Any]:
    """Official nesting plus ``Examples`` per entry and one ``meta`` block (labels, files, time)."""
    doc = evaluation.to_official_dict(count=count)
    for name, scope in evaluation.scopes.items():
        entry = doc[name] if "/" not in name else doc[name.split("/")[0]][name.split("/")[1]]
        entry["Examples"] = scope.n_examples
    doc["meta"] = {
        "tool": ToolInfo.current("evaluate-predictions").to_dict(),
        "metric": "official evaluation.py (moinnadeem/StereoSet @ ead7d086): macro over target terms",
        "count": COUNT_LABELS[count],
        "gold": {"path": str(gold), "sha256": file_sha256(gold)},
        "predictions": {"path": str(predictions), "sha256": file_sha256(predictions)},
        "timestamp": utc_timestamp(),
    }
    return doc


def format_table(evaluation: StereoSetEvaluation) -> str:
    lines = [f"{'scope':28s} {'examples':>8s} {'Count*':>7s} {'LM Score':>9s} {'SS Score':>9s} {'ICAT':>9s}"]
    for name, s in evaluation.scopes.items():
        lines.append(
            f"{name:28s} {s.n_examples:8d} {s.official_count:7.0f} {s.lms.value:9.2f} {s.ss.value:9.2f} {s.icat.value:9.2f}"
        )
    lines.append(
        "* Count as evaluation.py prints it (3 x examples per bias type, a loop artefact). "
        "Ideal: LM 100, SS 50, ICAT 100."
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    items = get_benchmark("stereoset").load(args.gold)
    predictions = read_official_predictions(args.predictions)
    check_coverage(predictions, items, gold=str(args.gold))
    evaluation = evaluate_stereoset(items, predictions.scores)
    print(format_table(evaluation))
    if args.output:
        count = "official" if args.official_count else "true"
        doc = results_document(evaluation, count=count, gold=args.gold, predictions=args.predictions)
        atomic_write_json(args.output, doc)
        print(f"wrote {args.output}")
    return 0
