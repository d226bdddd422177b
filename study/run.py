"""Run a study end to end: plan → load benchmarks → score (executor, cache) → analyse → report.

:func:`run_study` is the library entry point behind ``stereoset-eval study`` and
``stereoset-eval demo``. It writes into the output folder:

* ``report.json`` / ``report.md`` / ``report.html`` — the report (:mod:`stereoset_eval.study.report`);
* ``scores.csv`` — every sentence score of every job (model, benchmark, method, sentence id, score);
* ``study_scores.csv`` — the per-model numbers behind the tables (one row per protocol, model,
  benchmark, stage and category, with CI bounds).

The files are built in a temporary folder and swapped in as one set (:mod:`stereoset_eval.foundation.outputs`):
a kill at any moment leaves the old set or the new one. The provenance block records the study config verbatim,
the data files' sha256, each model's id / revision / weights sha256, every job's scoring
provenance (method, options, cache hits), the executor and the library versions.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from stereoset_eval.foundation.provenance import ReportProvenance, build_provenance, file_sha256
from stereoset_eval.analysis.report_model import Report
from stereoset_eval.analysis.report_writer import write_report
from stereoset_eval.analysis.results_table import mark_limited
from stereoset_eval.scoring.hub import check_models
from stereoset_eval.study.analyse import StudyAnalysis, analyse
from stereoset_eval.study.benchmarks import BenchmarkData, drop_unavailable, load_benchmarks
from stereoset_eval.study.config import StudyConfig
from stereoset_eval.study.config_validate import validate
from stereoset_eval.study.executors import Executor, JobResult, LocalExecutor, ScoreSettings
from stereoset_eval.study.plan import Job, check_protocols, model_kinds, plan_jobs, protocols
from stereoset_eval.study.report import build_study_report
from stereoset_eval.foundation.atomic import atomic_write_text
from stereoset_eval.foundation.outputs import check_replaceable, output_folder

Log = Callable[[str], None]

#: study config fields that change no number (where things are read, cached or written, the title)
IDENTITY_IGNORED = frozenset({"output", "source", "data_dir", "download", "cache_dir", "use_cache", "title"})


def study_identity(config: StudyConfig | Mapping[str, Any]) -> dict[str, Any]:
    """What makes two studies the same run: the config as given (before unavailable optional
    benchmarks are dropped, so a rerun that skips the same ones is the same run), less
    :data:`IDENTITY_IGNORED`. Recorded in the output folder's marker (:mod:`stereoset_eval.foundation.outputs`)."""
    data = config.to_dict() if isinstance(config, StudyConfig) else dict(config)
    return {k: v for k, v in data.items() if k not in IDENTITY_IGNORED}


@dataclass(frozen=True)
class StudyRun:
    """What a study run produced (the files are in ``paths``)."""

    config: StudyConfig
    benchmarks: Mapping[str, BenchmarkData]
    jobs: tuple[Job, ...]
    results: tuple[JobResult, ...]
    analysis: StudyAnalysis
    report: Report
    paths: Mapping[str, Path]

    @property
    def cache_stats(self) -> dict[str, int]:
        """Sentences read from the cache and computed, over all jobs."""
        return {k: sum(r.cache_stats.get(k, 0) for r in self.results) for k in ("hits", "computed")}


def scores_csv(results: Sequence[JobResult]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["model", "benchmark", "method", "sentence_id", "score"])
    for r in results:
        for sid, score in r.scores.items():
            w.writerow([r.job.model.name, r.job.benchmark, r.job.method, sid, repr(score) if math.isfinite(score) else ""])
    return buf.getvalue()


def _study_scores(analysis: StudyAnalysis) -> str:
    frames = [pa.scores.assign(protocol=name) for name, pa in analysis.protocols.items()]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    cols = ["protocol"] + [c for c in table.columns if c != "protocol"]
    return table[cols].to_csv(index=False, lineterminator="\n") if not table.empty else ""


def _provenance(config: StudyConfig, settings: ScoreSettings, benchmarks: Mapping[str, BenchmarkData],
                results: Sequence[JobResult], kinds: Mapping[str, str], executor: Mapping[str, Any],
                analysis: StudyAnalysis, score_file: Path, warnings: list[str]) -> ReportProvenance:
    files = sorted({p for b in benchmarks.values() for p in b.files})
    models = []
    for m in config.models:
        prov: Mapping[str, Any] = next((r.provenance.get("model", {}) for r in results if r.job.model.name == m.name), {})
        models.append({"name": m.name, "id": m.id, "revision_requested": m.revision, "kind": kinds[m.name],
                       "revision": prov.get("revision"), "weights_sha256": prov.get("weights_sha256"),
                       "weight_files": prov.get("weight_files"), "config_sha256": prov.get("config_sha256"),
                       "tokenizer_sha256": prov.get("tokenizer_sha256"), "class": prov.get("class")})
    n_per_slice = {name: len(b.items) for name, b in benchmarks.items()}
    for jm in analysis.metrics:
        if jm.balanced is not None:
            n_per_slice.update({f"{jm.job.benchmark}/{g}": s.n for g, s in jm.balanced.groups.items()})
    return build_provenance(
        data_files=files,
        score_files=[score_file],
        model=", ".join(m.id for m in config.models),
        method=", ".join(sorted({r.job.method for r in results})),
        options={"analysis": dataclasses.asdict(config.analysis), "scoring": dataclasses.asdict(settings),
                 "protocols": protocols(config), "limit": config.limit},
        n_per_slice=n_per_slice,
        scores_provenance={r.job.key: dict(r.provenance) for r in results},
        extra={
            "study": config.to_dict(),
            "models": models,
            "benchmarks": {name: {"source": b.spec.source, "from": b.spec.origin, "counts": dict(b.counts),
                                  "files": [{"path": str(p), "sha256": file_sha256(p)} for p in b.files],
                                  "curation": dict(b.curation) if b.curation else None}
                           for name, b in benchmarks.items()},
            "executor": dict(executor),
            "cache": {k: sum(r.cache_stats.get(k, 0) for r in results) for k in ("hits", "computed")},
            "warnings": warnings,
        },
    )


def _name_final_paths(provenance: Any, tmp: Path, out: Path) -> Any:
    """``provenance`` with the score file at its final place, not in the temporary folder it is written to."""
    def final(path: str) -> str:
        return str(out / Path(path).relative_to(tmp)) if path.startswith(str(tmp)) else path

    if dataclasses.is_dataclass(provenance) and not isinstance(provenance, type) and hasattr(provenance, "score_files"):
        refs = tuple(dataclasses.replace(f, path=final(f.path)) for f in provenance.score_files)
        return dataclasses.replace(provenance, score_files=refs)
    if isinstance(provenance, dict):
        for entry in provenance.get("score_files") or []:
            if isinstance(entry, dict) and "path" in entry:
                entry["path"] = final(str(entry["path"]))
    return provenance


def run_study(config: StudyConfig, *, executor: Executor | None = None, log: Log | None = None,
              overwrite: bool = False) -> StudyRun:
    """Score every job of ``config`` (only what the cache lacks), analyse, and write the report.

    Args:
        config: the study.
        executor: :class:`~stereoset_eval.study.executors.LocalExecutor` (default) or ``RayExecutor``.
        log: called with one line per step and per finished job (None: silent).
        overwrite: replace the output folder even if it holds a different study (default:
            refuse before any scoring, naming the differing fields; a rerun of the same study
            replaces it).
    """
    validate(config)  # a config built or changed in code is checked like a parsed one
    say = log or (lambda _msg: None)
    identity = study_identity(config)
    out = check_replaceable(Path(config.output).expanduser(), command="study", identity=identity,
                            overwrite=overwrite)  # refuse before any scoring
    executor = executor or LocalExecutor()
    check_models([(m.id, m.revision) for m in config.models], say=say)  # one hub probe, clear offline errors
    kinds = model_kinds(config)
    config = drop_unavailable(config)
    for name, reason in config.skipped:
        say(f"skipped benchmark {name}: {reason}")
    benchmarks = load_benchmarks(config)
    for b in benchmarks.values():
        say(f"benchmark {b.name}: {len(b.items)} items ({', '.join(f'{k} {v}' for k, v in b.counts.items())})")
    jobs = plan_jobs(config, kinds)
    warnings = check_protocols(config, kinds, jobs)
    for w in warnings:
        say(f"warning: {w}")
    settings = ScoreSettings.of(config.run, cache_dir=config.cache_dir, use_cache=config.use_cache)
    say(f"scoring {len(jobs)} job{'' if len(jobs) == 1 else 's'} with the {executor.name} executor")
    done = [0]

    def on_result(r: JobResult) -> None:
        done[0] += 1
        say(f"[{done[0]}/{len(jobs)}] {r.job.key}: {len(r.scores)} sentences, {r.cache_stats.get('hits', 0)} from "
            f"the cache, {r.cache_stats.get('computed', 0)} computed ({r.wall_time_s:.1f} s)")

    results = executor.run(jobs, {n: b.items for n, b in benchmarks.items()}, settings, on_result=on_result)
    say("analysing")
    analysis = analyse(results, benchmarks, config, kinds)
    with output_folder(out, command="study", identity=identity, overwrite=overwrite) as tmp:  # the old set or the new set, whatever happens
        score_file = atomic_write_text(tmp / "scores.csv", scores_csv(results))
        table_file = atomic_write_text(tmp / "study_scores.csv", _study_scores(analysis))
        provenance = _provenance(config, settings, benchmarks, results, kinds, executor.describe(), analysis,
                                 score_file, warnings)
        provenance = _name_final_paths(provenance, tmp, out)
        report = build_study_report(config, benchmarks, results, analysis, kinds, executor.describe(), provenance)
        report = mark_limited(report, config.limit)  # every table title of a --limit run says so
        written = {**write_report(report, tmp), "scores": score_file, "study_scores": table_file}
    paths = {kind: out / path.relative_to(tmp) for kind, path in written.items()}
    return StudyRun(config, benchmarks, tuple(jobs), tuple(results), analysis, report, paths)
