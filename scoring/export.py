"""Writing scores: CSV and JSON score files, provenance, StereoSet predictions (all atomic).

* ``<stem>.csv`` — one row per sentence: item id, sentence id, role, method, score, n_tokens,
  and the scalar extras (e.g. ``unrounded`` for crows-nangia);
* ``<stem>.json`` — the score file (:mod:`stereoset_eval.foundation.score_file`, versioned):
  the same records with per-token ids and log-probabilities, the provenance embedded;
* ``predictions.json`` — StereoSet's official predictions format
  ``{"intrasentence": [{"id", "score"}], "intersentence": [...]}``, readable by the official
  ``evaluation.py``;
* ``provenance.json`` — everything needed to reproduce the numbers, with each run's timing
  and cache use (the one block two identical runs may differ in).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import Any, Iterable, Mapping

from stereoset_eval.foundation.atomic import atomic_write_json, atomic_write_text
from stereoset_eval.foundation.provenance import FileRef, ScoreProvenance
from stereoset_eval.foundation.score_file import score_document, write_score_file
from stereoset_eval.scoring.records import ScoreSet

CSV_COLUMNS: tuple[str, ...] = ("item_id", "sentence_id", "role", "method", "score", "n_tokens")


def scores_csv(score_sets: Iterable[ScoreSet]) -> str:
    """CSV text of the records of ``score_sets`` (scalar extras become ``extra_<name>`` columns)."""
    rows: list[dict[str, Any]] = []
    extras: dict[str, None] = {}
    for ss in score_sets:
        for r in ss.records:
            row = {"item_id": r.item_id, "sentence_id": r.sentence_id, "role": r.role, "method": ss.method,
                   "score": _fmt(r.score), "n_tokens": r.n_tokens}
            for k, v in r.extra.items():
                if isinstance(v, (int, float, str)) and not isinstance(v, bool):
                    row[f"extra_{k}"] = _fmt(v) if isinstance(v, float) else v
                    extras.setdefault(f"extra_{k}", None)
            rows.append(row)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(CSV_COLUMNS) + list(extras), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _fmt(x: float) -> str:
    return repr(float(x)) if math.isfinite(x) else ""


def scores_json(score_sets: Iterable[ScoreSet], provenance: ScoreProvenance) -> dict[str, Any]:
    """The score file's content: per method the records, the provenance without its per-run
    ``run`` blocks, so the same command gives byte-identical score files whether it computed
    or read the cache."""
    return score_document(_records_by_method(score_sets), provenance)


def _records_by_method(score_sets: Iterable[ScoreSet]) -> dict[str, list[dict[str, Any]]]:
    return {ss.method: [r.to_dict() for r in ss.records] for ss in score_sets}


def score_provenance(record: Mapping[str, Any] | ScoreProvenance) -> ScoreProvenance:
    """The typed block of a scoring command's record (``command``, ``benchmark``, ``data``,
    ``notes``, ``runs``: part -> ``ScoreSet.provenance``)."""
    if isinstance(record, ScoreProvenance):
        return record
    unknown = sorted(set(record) - {"command", "benchmark", "data", "notes", "runs"})
    if unknown:  # nothing is dropped silently
        raise ValueError(f"scoring record: unknown field(s) {unknown}")
    return ScoreProvenance.of_runs(
        record.get("runs") or {}, command=record.get("command"), benchmark=record.get("benchmark"),
        data=[FileRef(d["file"], d.get("sha256")) for d in record.get("data", ())], notes=record.get("notes", ()),
    )


def stereoset_predictions(*, intrasentence: ScoreSet | None, intersentence: ScoreSet | None) -> dict[str, Any]:
    """The official predictions file: per task, ``[{"id": sentence id, "score": float}]``."""
    out: dict[str, Any] = {}
    for task, ss in (("intrasentence", intrasentence), ("intersentence", intersentence)):
        if ss is not None:
            out[task] = [{"id": r.sentence_id, "score": r.score if math.isfinite(r.score) else None}
                         for r in ss.records]
    return out


def write_outputs(out_dir: str | Path, score_sets: list[ScoreSet], provenance: Mapping[str, Any] | ScoreProvenance,
                  *, predictions: Mapping[str, Any] | None = None, stem: str = "scores") -> list[Path]:
    """Write the score files, the provenance and (for StereoSet) the predictions; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    typed = score_provenance(provenance)
    written = [
        atomic_write_text(out / f"{stem}.csv", scores_csv(score_sets)),
        write_score_file(out / f"{stem}.json", _records_by_method(score_sets), typed),
    ]
    if predictions is not None:
        written.append(atomic_write_json(out / "predictions.json", dict(predictions)))
    written.append(atomic_write_json(out / "provenance.json", typed.to_dict()))
    return written
