"""``stereoset-eval score``: score a benchmark with a language model, write scores + provenance.

Examples::

    stereoset-eval score --model bert-base-uncased --benchmark stereoset --data dev.json --output out/
    stereoset-eval score --model gpt2 --benchmark crows-pairs --method causal-ll --output out/
    stereoset-eval score --model roberta-base --benchmark stereoset --option leading_space=bias-bench ...

StereoSet: intrasentence items are scored with ``--method`` and intersentence items with
``--inter-method``. Defaults follow the model: a masked LM gets ``stereoset-mlm`` and, if the
checkpoint has a next-sentence head, ``stereoset-nsp`` (otherwise intersentence is skipped
and the provenance says so); a causal LM gets ``stereoset-causal`` and ``stereoset-inter-causal``.
CrowS-Pairs / pairs: ``crows-nangia`` for masked LMs, ``causal-ll`` for causal LMs.

Writes ``scores.csv``, ``scores.json``, ``provenance.json``, for StereoSet
``predictions.json`` in the official predictions format, and ``results.json`` (the metrics of
``stereoset-eval report``'s defaults) — one set, swapped in whole. torch is imported only when run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Mapping

from stereoset_eval.analysis.benchmarks import get_benchmark
from stereoset_eval.cli.commands._common import add_data_args, load_from_args
from stereoset_eval.cli.run_settings import add_run_settings_args, run_settings_from_args
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.outputs import check_replaceable, output_folder, output_path
from stereoset_eval.scoring.methods import METHODS, get_method



def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score benchmark sentences with a language model (cached, resumable)")
    add_data_args(p)
    p.add_argument("--model", required=True, help="hub id or local folder of a pretrained model")
    p.add_argument("--method", choices=sorted(METHODS), help="method (StereoSet: for intrasentence items)")
    p.add_argument("--inter-method", choices=sorted(METHODS), help="StereoSet intersentence method")
    p.add_argument("--skip-intra", action="store_true", help="StereoSet: do not score intrasentence items")
    p.add_argument("--skip-inter", action="store_true", help="StereoSet: do not score intersentence items")
    p.add_argument("--option", action="append", default=[], metavar="[METHOD:]NAME=VALUE",
                   help="method option (repeatable); VALUE is JSON (true, 3, null) or a plain string")
    p.add_argument("--output", required=True, type=output_path,
                   help="output folder (replaced as a whole, and only if it is an earlier score output)")
    add_run_settings_args(p)  # --device, --dtype, --batch-tokens, --last-layer, --allocator
    p.add_argument("--revision", default=None, help="hub revision (branch, tag or commit)")
    p.add_argument("--cache-dir", type=Path, default=None, help="result cache folder (default $STEREOSET_EVAL_CACHE)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--limit", type=int, metavar="N",
                   help="score only the first N items (StereoSet: per task) — a quick look, not a result")
    p.add_argument("--overwrite", action="store_true",
                   help="replace --output even if it holds a different scoring run (default: refuse)")
    p.set_defaults(func=run)


def parse_options(specs: list[str], methods: list[str]) -> dict[str, dict[str, Any]]:
    """``[METHOD:]NAME=VALUE`` strings -> per-method option dicts (unknown names are errors)."""
    out: dict[str, dict[str, Any]] = {m: {} for m in methods}
    for spec in specs:
        target, _, rest = spec.rpartition(":") if ":" in spec.split("=", 1)[0] else ("", "", spec)
        name, eq, raw = rest.partition("=")
        if not eq or not name:
            raise StereosetEvalError(f"--option {spec!r}: expected NAME=VALUE or METHOD:NAME=VALUE")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        chosen = [target] if target else [m for m in methods if any(o.name == name for o in get_method(m).options)]
        if target and target not in methods:
            raise StereosetEvalError(f"--option {spec!r}: method {target!r} is not used in this run ({', '.join(methods)})")
        if not chosen:
            raise StereosetEvalError(f"--option {spec!r}: no method of this run ({', '.join(methods)}) has option {name!r}")
        for m in chosen:
            out[m][name] = value
    return out


def _plan(args: argparse.Namespace, items: list) -> tuple[list[tuple[str, str, list]], list[str]]:
    """(part, method, items) to score, and notes for the provenance."""
    from stereoset_eval.scoring.model_info import kind_from_available, model_kinds_available

    kinds = model_kinds_available(args.model, args.revision)
    kind = kind_from_available(kinds, args.model)  # the one rule (scoring.model_info.detect_model_kind)
    notes: list[str] = []
    defaults = get_benchmark(args.benchmark).score_methods  # part -> model kind -> method
    if "intrasentence" not in defaults:  # a pair benchmark: one part
        return [("pairs", args.method or defaults["pairs"][kind], items)], notes
    plan = []
    intra = [it for it in items if it.task == "intrasentence"]
    inter = [it for it in items if it.task == "intersentence"]
    if intra and not args.skip_intra:
        plan.append(("intrasentence", args.method or defaults["intrasentence"][kind], intra))
    if inter and not args.skip_inter:
        method = args.inter_method or defaults["intersentence"][kind]
        if method == "stereoset-nsp" and not args.inter_method and not kinds["nsp"]:
            notes.append(f"intersentence not scored: {args.model} has no next-sentence-prediction head "
                         "(choose --inter-method to score it another way)")
        else:
            plan.append(("intersentence", method, inter))
    if not plan:
        raise StereosetEvalError("nothing to score: no StereoSet items left after --skip-intra/--skip-inter")
    return plan, notes


def run(args: argparse.Namespace) -> int:
    _items, _results, _provenance, paths, report = score_run(args)
    for path in paths:
        print(path)
    if report is not None:
        from stereoset_eval.cli.commands._results import show_results

        show_results(report, args.output, title=f"Results — {args.model} on {args.benchmark} "
                     f"(stereoset-eval report defaults)", limit=args.limit, write=False)
    return 0


#: ``score`` command fields that change no number (the run-folder identity leaves them out)
IDENTITY_IGNORED = frozenset({"no_cache", "overwrite"})


def score_identity(command: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two scoring runs the same run (recorded in the output folder's marker)."""
    return {k: v for k, v in command.items() if k not in IDENTITY_IGNORED}


def score_run(args: argparse.Namespace, *, results_table: bool = True) -> tuple[list, dict, dict, list[Path], Any]:
    """Score as the arguments say and write the outputs.

    Returns (items scored, {part: ScoreSet}, provenance, written paths, the results Report or None).

    The outputs are one set, swapped in whole (:func:`stereoset_eval.foundation.outputs.output_folder`):
    ``scores.csv``, ``scores.json``, ``provenance.json``, ``predictions.json`` (StereoSet) and,
    with ``results_table``, ``results.json`` (the metrics of ``stereoset-eval report``'s
    defaults, the returned Report, for the terminal table) — a failed rerun keeps
    the old set, ``results.json`` included.
    """
    from stereoset_eval.scoring.api import score_items
    from stereoset_eval.scoring.export import stereoset_predictions, write_outputs

    from stereoset_eval.scoring.hub import check_models

    from stereoset_eval.cli.commands._common import limit_items

    if args.limit is not None and args.limit < 1:
        raise StereosetEvalError(f"--limit {args.limit}: give a positive number of items")
    settings = run_settings_from_args(args)
    command = _command(args, settings)
    identity = score_identity(command)
    check_replaceable(args.output, command="score", identity=identity,
                      overwrite=args.overwrite)  # refuse before any scoring
    check_models([(args.model, args.revision)], say=lambda msg: print(msg, file=sys.stderr))
    items = limit_items(load_from_args(args), args.limit)
    plan, notes = _plan(args, items)
    options = parse_options(args.option, [m for _, m, _ in plan])
    from stereoset_eval.scoring.shared_work import SharedWork

    results = {}
    shared = SharedWork()  # the parts' methods share encodings and masked inputs of this model
    for part, method, part_items in plan:
        what = part if args.benchmark == "stereoset" else args.benchmark
        print(f"scoring {len(part_items)} {what} items with {method} ({args.model})", file=sys.stderr)
        results[part] = score_items(
            part_items, model=args.model, method=method, options=options[method], settings=settings,
            revision=args.revision, cache_dir=args.cache_dir, use_cache=not args.no_cache, progress=not args.no_progress,
            shared=shared,
        )
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    files = sorted({(it.provenance.source_file, it.provenance.sha256) for it in items})
    provenance = {
        "command": command,
        "benchmark": args.benchmark,
        "data": [{"file": f, "sha256": h} for f, h in files],
        "notes": notes,
        "runs": {part: ss.provenance for part, ss in results.items()},
    }
    predictions = None
    if args.benchmark == "stereoset":
        predictions = stereoset_predictions(intrasentence=results.get("intrasentence"),
                                            intersentence=results.get("intersentence"))
    scored = [it for _, _, part in plan for it in part]
    report = _results_report(args, scored, results, provenance) if results_table else None
    with output_folder(args.output, command="score", identity=identity, overwrite=args.overwrite) as tmp:
        # one set: a stale predictions.json never survives, a failed rerun keeps the old results.json
        written = write_outputs(tmp, list(results.values()), provenance, predictions=predictions)
        if report is not None:
            written.append(_write_results(report, tmp, args.limit))
    paths = [args.output / Path(p).relative_to(tmp) for p in written]
    for part, ss in results.items():
        print(f"{part}: {len(ss)} sentences with {ss.method} (cache hits {ss.cache_stats['hits']}, "
              f"computed {ss.cache_stats['computed']})", file=sys.stderr)
    return scored, results, provenance, paths, report


def _command(args: argparse.Namespace, settings: Any) -> dict[str, Any]:
    """The options of this run that the provenance records (and the run folder guard compares)."""
    return {"model": args.model, "benchmark": args.benchmark, "data": str(args.data) if args.data else None,
            "method": args.method, "inter_method": args.inter_method, "skip_intra": args.skip_intra,
            "skip_inter": args.skip_inter, "options": args.option, **settings.to_dict(), "revision": args.revision,
            "no_cache": args.no_cache, "limit": args.limit}


def _results_report(args: argparse.Namespace, items: list, results: dict, provenance: dict) -> Any:
    """The report of what was scored with ``stereoset-eval report``'s defaults (a Report), or None.

    When the report's defaults do not apply to these items (say, pairs without a dimension tag),
    one note says so and ``stereoset-eval report`` takes options; the scores are written anyway.
    """
    from stereoset_eval.analysis.report_build import build_report
    from stereoset_eval.analysis.results_table import mark_limited
    from stereoset_eval.cli.commands.report import compute_results, default_args
    from stereoset_eval.foundation.provenance import build_provenance

    scores = {sid: v for ss in results.values() for sid, v in ss.scores.items()}
    opts = default_args(args.benchmark)
    try:
        res = compute_results(items, scores, args.benchmark, opts, args.model)
    except StereosetEvalError as exc:
        print(f"note: no results table ({exc}); run `stereoset-eval report` with the options you need",
              file=sys.stderr)
        return None
    prov = build_provenance(model=args.model, method=", ".join(ss.method for ss in results.values()),
                            options={"limit": args.limit, "report_defaults": "stereoset-eval report"},
                            scores_provenance=provenance)
    return mark_limited(build_report(res, prov), args.limit)


def _write_results(report: Any, folder: Path, limit: int | None) -> Path:
    """``folder/results.json`` of ``report`` (flat rows: model, benchmark, metric, value, CI, n, ideal)."""
    from stereoset_eval.analysis.report_json import report_to_json
    from stereoset_eval.analysis.results_table import result_rows, results_json
    from stereoset_eval.foundation.atomic import atomic_write_text

    rows = result_rows(json.loads(report_to_json(report)), limit=limit)
    return atomic_write_text(folder / "results.json", results_json(rows))
