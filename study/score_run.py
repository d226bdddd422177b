"""Score one benchmark with one model and write the score set: the library behind ``stereoset-eval score``.

:func:`score_benchmark` loads the benchmark's items (``--data`` or its default file), scores each
part of the benchmark (:meth:`~stereoset_eval.analysis.benchmarks.Benchmark.score_parts`: StereoSet's
two tasks, one part for pair benchmarks) with the method its reference code uses for the model's
kind unless told otherwise, and writes ``scores.csv``, ``scores.json``, ``provenance.json``, the
official ``predictions.json`` when the benchmark has one, and ``results.json`` (the metrics of the
report's defaults, :mod:`stereoset_eval.study.report_run`) — one set, swapped in whole.

It sits in ``study/`` because it combines scoring with analysis (the results table).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from stereoset_eval.analysis.benchmarks import Benchmark, get_benchmark
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import Item
from stereoset_eval.foundation.outputs import check_replaceable, output_folder
from stereoset_eval.scoring.settings import RunSettings
from stereoset_eval.study.benchmarks import limit_items, load_benchmark_items

Log = Callable[[str], None]

#: ``score`` command fields that change no number (the run-folder identity leaves them out)
IDENTITY_IGNORED = frozenset({"no_cache", "overwrite"})


@dataclass(frozen=True)
class ScoreRequest:
    """One scoring run: what ``stereoset-eval score`` takes, as one value (its flags are these fields).

    Attributes:
        model: hub id or local folder of a pretrained model.
        benchmark: a registered benchmark name.
        output: the output folder (replaced as a whole, and only if it is an earlier score output).
        data: the data file (format detected); None: the benchmark's default file in ``data_dir``.
        data_dir: the data folder (None: ``$STEREOSET_EVAL_DATA`` or the user cache).
        download: fetch a missing default file (False: only files already there).
        method: the method of the benchmark's first part (StereoSet: intrasentence); None: the
            reference code's method for the model's kind.
        inter_method: the method of its second part (StereoSet: intersentence).
        skip_intra: leave the first part unscored (StereoSet: intrasentence).
        skip_inter: leave the second part unscored (StereoSet: intersentence).
        options: method options, ``[METHOD:]NAME=VALUE`` (VALUE is JSON or a plain string).
        settings: device, dtype, batching, last-layer path, allocator.
        revision: hub revision (branch, tag or commit).
        cache_dir: result cache folder (None: ``$STEREOSET_EVAL_CACHE``).
        use_cache: read and write the result cache.
        progress: show a progress bar.
        limit: score only the first N items (StereoSet: per task) — a quick look, not a result.
        overwrite: replace ``output`` even if it holds a different scoring run.
    """

    model: str
    benchmark: str
    output: Path
    data: Path | None = None
    data_dir: Path | None = None
    download: bool = True
    method: str | None = None
    inter_method: str | None = None
    skip_intra: bool = False
    skip_inter: bool = False
    options: tuple[str, ...] = ()
    settings: RunSettings = field(default_factory=RunSettings)
    revision: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True
    progress: bool = True
    limit: int | None = None
    overwrite: bool = False

    def command(self) -> dict[str, Any]:
        """The options of this run that the provenance records (and the run folder guard compares)."""
        return {"model": self.model, "benchmark": self.benchmark, "data": str(self.data) if self.data else None,
                "method": self.method, "inter_method": self.inter_method, "skip_intra": self.skip_intra,
                "skip_inter": self.skip_inter, "options": list(self.options), **self.settings.to_dict(),
                "revision": self.revision, "no_cache": not self.use_cache, "limit": self.limit}


@dataclass(frozen=True)
class ScoreOutcome:
    """What a scoring run produced.

    Attributes:
        items: the items scored (after ``limit``), part after part.
        results: part -> :class:`~stereoset_eval.scoring.ScoreSet`.
        provenance: the recorded ``provenance.json`` content.
        paths: the files written, at their final place.
        report: the report of the report's defaults (a Report), or None when they do not apply.
    """

    items: tuple[Item, ...]
    results: Mapping[str, Any]
    provenance: Mapping[str, Any]
    paths: tuple[Path, ...]
    report: Any = None


def score_identity(command: Mapping[str, Any]) -> dict[str, Any]:
    """What makes two scoring runs the same run (recorded in the output folder's marker)."""
    return {k: v for k, v in command.items() if k not in IDENTITY_IGNORED}


def check_limit(limit: int | None) -> None:
    if limit is not None and limit < 1:
        raise StereosetEvalError(f"--limit {limit}: give a positive number of items")


def parse_options(specs: Sequence[str], methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``[METHOD:]NAME=VALUE`` strings -> per-method option dicts (unknown names are errors)."""
    from stereoset_eval.scoring.methods import get_method

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


def plan_parts(req: ScoreRequest, bench: Benchmark, items: Sequence[Item]) -> tuple[list[tuple[str, str, list[Item]]], list[str]]:
    """(part, method, items) to score, and notes for the provenance.

    The first and second part of the benchmark take ``method`` / ``inter_method`` and
    ``skip_intra`` / ``skip_inter``; a default method that needs a head the model lacks (StereoSet's
    next-sentence method on a model without one) leaves its part out with a note.
    """
    from stereoset_eval.scoring.methods import get_method
    from stereoset_eval.scoring.model_info import kind_from_available, model_kinds_available

    kinds = model_kinds_available(req.model, req.revision)
    kind = kind_from_available(kinds, req.model)  # the one rule (scoring.model_info.detect_model_kind)
    notes: list[str] = []
    chosen = (req.method, req.inter_method)
    skipped = (req.skip_intra, req.skip_inter)
    parts = bench.score_parts(items)
    plan = []
    for i, (part, part_items) in enumerate(parts.items()):
        given = chosen[i] if i < len(chosen) else None
        if len(parts) > 1 and (not part_items or (i < len(skipped) and skipped[i])):
            continue
        method = given or bench.score_methods[part][kind]
        needs = get_method(method).model_kind
        if given is None and needs != kind and not kinds.get(needs):  # a default that needs a missing head
            head = "next-sentence-prediction head" if needs == "nsp" else f"{needs} head"
            notes.append(f"{part} not scored: {req.model} has no {head} "
                         "(choose --inter-method to score it another way)")
            continue
        plan.append((part, method, part_items))
    if not plan:
        raise StereosetEvalError(f"nothing to score: no {bench.title} items left after --skip-intra/--skip-inter")
    return plan, notes


def score_benchmark(req: ScoreRequest, *, results_table: bool = True, log: Log | None = None) -> ScoreOutcome:
    """Score as ``req`` says and write the outputs (one set, swapped in whole).

    Args:
        results_table: also compute the report of the report's defaults and write ``results.json``
            (a failed rerun keeps the old set, ``results.json`` included).
        log: called with one line per step (None: silent).
    """
    from stereoset_eval.scoring.api import score_items
    from stereoset_eval.scoring.export import stereoset_predictions, write_outputs
    from stereoset_eval.scoring.hub import check_models
    from stereoset_eval.scoring.shared_work import SharedWork

    say = log or (lambda _msg: None)
    check_limit(req.limit)
    settings = req.settings.validate()
    command = req.command()
    identity = score_identity(command)
    check_replaceable(req.output, command="score", identity=identity, overwrite=req.overwrite)  # before any scoring
    check_models([(req.model, req.revision)], say=say)
    bench = get_benchmark(req.benchmark)
    _path, loaded = load_benchmark_items(req.benchmark, req.data, req.data_dir, download=req.download)
    items = limit_items(loaded, req.limit)
    plan, notes = plan_parts(req, bench, items)
    options = parse_options(req.options, [m for _, m, _ in plan])
    results = {}
    shared = SharedWork()  # the parts' methods share encodings and masked inputs of this model
    for part, method, part_items in plan:
        what = part if len(bench.score_methods) > 1 else req.benchmark
        say(f"scoring {len(part_items)} {what} items with {method} ({req.model})")
        results[part] = score_items(
            part_items, model=req.model, method=method, options=options[method], settings=settings,
            revision=req.revision, cache_dir=req.cache_dir, use_cache=req.use_cache, progress=req.progress,
            shared=shared,
        )
    for note in notes:
        say(f"note: {note}")
    files = sorted({(it.provenance.source_file, it.provenance.sha256) for it in items})
    provenance = {
        "command": command,
        "benchmark": req.benchmark,
        "data": [{"file": f, "sha256": h} for f, h in files],
        "notes": notes,
        "runs": {part: ss.provenance for part, ss in results.items()},
    }
    predictions = None
    if bench.writes_predictions:
        predictions = stereoset_predictions(**{part: results.get(part) for part in bench.score_methods})
    scored = [it for _, _, part in plan for it in part]
    report = _results_report(req, scored, results, provenance, say) if results_table else None
    with output_folder(req.output, command="score", identity=identity, overwrite=req.overwrite) as tmp:
        # one set: a stale predictions.json never survives, a failed rerun keeps the old results.json
        written = write_outputs(tmp, list(results.values()), provenance, predictions=predictions)
        if report is not None:
            written.append(write_results(report, tmp, req.limit))
    paths = tuple(Path(req.output) / Path(p).relative_to(tmp) for p in written)
    for part, ss in results.items():
        say(f"{part}: {len(ss)} sentences with {ss.method} (cache hits {ss.cache_stats['hits']}, "
            f"computed {ss.cache_stats['computed']})")
    return ScoreOutcome(tuple(scored), results, provenance, paths, report)


def _results_report(req: ScoreRequest, items: list[Item], results: Mapping[str, Any],
                    provenance: Mapping[str, Any], say: Log) -> Any:
    """The report of what was scored with the report's defaults (a Report), or None.

    When the report's defaults do not apply to these items (say, pairs without a dimension tag),
    one note says so and ``stereoset-eval report`` takes options; the scores are written anyway.
    """
    from stereoset_eval.analysis.report_build import build_report
    from stereoset_eval.analysis.results_table import mark_limited
    from stereoset_eval.foundation.provenance import build_provenance
    from stereoset_eval.study.report_run import ReportOptions, compute_results

    scores = {sid: v for ss in results.values() for sid, v in ss.scores.items()}
    try:
        res = compute_results(items, scores, req.benchmark, ReportOptions(), req.model)
    except StereosetEvalError as exc:
        say(f"note: no results table ({exc}); run `stereoset-eval report` with the options you need")
        return None
    prov = build_provenance(model=req.model, method=", ".join(ss.method for ss in results.values()),
                            options={"limit": req.limit, "report_defaults": "stereoset-eval report"},
                            scores_provenance=dict(provenance))
    return mark_limited(build_report(res, prov), req.limit)


def write_results(report: Any, folder: Path, limit: int | None) -> Path:
    """``folder/results.json`` of ``report`` (flat rows: model, benchmark, metric, value, CI, n, ideal)."""
    from stereoset_eval.analysis.results_table import result_rows, results_json
    from stereoset_eval.foundation.atomic import atomic_write_text

    rows = result_rows(report, limit=limit)  # the benchmark's typed headline results
    return atomic_write_text(folder / "results.json", results_json(rows))
