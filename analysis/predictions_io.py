"""Reading and validating score files: official StereoSet predictions, CSV and JSON score tables.

Accepted formats (detected from the content):

* ``stereoset-predictions``: the official predictions JSON,
  ``{"intrasentence": [{"id": sentence_id, "score": float}], "intersentence": [...]}``;
* ``scores-csv``: a CSV with columns ``sentence_id,score`` (other columns ignored);
* ``scores-json``: ``{"scores": {sentence_id: score}}`` (optionally with ``provenance``),
  ``{"records": [{"sentence_id", "score", ...}], "provenance": {...}}`` (what
  ``stereoset-eval score`` writes), a list of such records, or a flat ``{sentence_id: score}``.

Every problem is a :class:`~stereoset_eval.foundation.errors.DataFormatError` naming the file, the entry and
the field: wrong shape, duplicate ids, NaN/inf or non-numeric scores. :func:`check_coverage`
then compares the ids with the gold items: missing and unknown ids are errors that list the
first few and the count — never a silent skip.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any, Iterable, Mapping

from stereoset_eval.analysis.errors import preview
from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.items import STEREOSET_TASKS, Item
from stereoset_eval.foundation.files import read_text_strict

PREDICTION_TASKS: tuple[str, ...] = STEREOSET_TASKS


@dataclass(frozen=True)
class ScoreFile:
    """Scores read from one file.

    Attributes:
        scores: sentence id -> score.
        format: detected format name.
        by_task: for official predictions, the task list each id was listed under.
        provenance: the file's own provenance block, when it has one (scores JSON).
    """

    path: str
    scores: Mapping[str, float]
    format: str
    by_task: Mapping[str, str] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error message stays one readable line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _score(path: Path, value: Any, *, sentence_id: str, row: int | None, field_name: str = "score") -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise DataFormatError(
            path, f"score of sentence id {sentence_id!r} is {_short(value)}, not a number", row=row, field=field_name
        )
    x = float(value)
    if not math.isfinite(x):
        raise DataFormatError(
            path, f"score of sentence id {sentence_id!r} is {value!r}, not a finite number", row=row, field=field_name
        )
    return x


def _add(path: Path, scores: dict[str, float], sid: Any, value: Any, row: int | None) -> str:
    if not isinstance(sid, str) or not sid.strip():
        raise DataFormatError(path, f"sentence id must be a non-empty string, got {_short(sid)}", row=row, field="id")
    sid = sid.strip()
    if sid in scores:
        raise DataFormatError(path, f"sentence id {sid!r} appears more than once", row=row, field="id")
    scores[sid] = _score(path, value, sentence_id=sid, row=row)
    return sid


def _records(path: Path, records: Any, scores: dict[str, float], *, where: str) -> list[str]:
    if not isinstance(records, list):
        raise DataFormatError(path, f"{where} must be a list of {{id, score}} objects, got {type(records).__name__}")
    ids = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise DataFormatError(
                path, f"{where}[{i}] must be an object with id and score, got {type(rec).__name__}", row=i
            )
        sid = rec.get("id", rec.get("sentence_id"))
        if sid is None or "score" not in rec:
            raise DataFormatError(
                path, f"{where}[{i}] lacks {'id' if sid is None else 'score'}; keys {sorted(rec)}", row=i
            )
        ids.append(_add(path, scores, sid, rec["score"], i))
    return ids


def parse_official_predictions(path: Path, data: Any) -> ScoreFile:
    """The official predictions object (``intrasentence`` / ``intersentence`` lists)."""
    if not isinstance(data, dict):
        raise DataFormatError(
            path, f"predictions must be a JSON object with keys {list(PREDICTION_TASKS)}, got {type(data).__name__}"
        )
    unknown = sorted(set(data) - set(PREDICTION_TASKS))
    if unknown or not data:
        raise DataFormatError(path, f"predictions keys must be among {list(PREDICTION_TASKS)}; found {sorted(data)}")
    scores: dict[str, float] = {}
    by_task: dict[str, str] = {}
    for task in PREDICTION_TASKS:
        for sid in _records(path, data.get(task, []), scores, where=task):
            by_task[sid] = task
    return ScoreFile(str(path), scores, "stereoset-predictions", by_task=by_task)


def parse_scores_json(path: Path, data: Any) -> ScoreFile:
    """Any JSON form listed in the module docstring."""
    if isinstance(data, dict) and data and set(data) <= set(PREDICTION_TASKS):
        return parse_official_predictions(path, data)
    scores: dict[str, float] = {}
    provenance: dict[str, Any] = {}
    if isinstance(data, list):
        _records(path, data, scores, where="records")
    elif isinstance(data, dict) and ("records" in data or "scores" in data):
        provenance = data.get("provenance") or {}
        if "records" in data:
            _records(path, data["records"], scores, where="records")
        else:
            if not isinstance(data["scores"], dict):
                raise DataFormatError(path, "'scores' must map sentence id -> score", field="scores")
            for sid, value in data["scores"].items():
                _add(path, scores, sid, value, None)
    elif isinstance(data, dict) and data and all(isinstance(v, dict) and "records" in v for v in data.values()):
        # ``scores.json`` of ``stereoset-eval score``: {method: {"records": [...]}}; its provenance
        # is the ``provenance.json`` written beside it
        for method, block in data.items():
            _records(path, block["records"], scores, where=f"{method}.records")
        sibling = path.with_name("provenance.json")
        if sibling.is_file():
            provenance = _load_json(sibling)
    elif isinstance(data, dict):
        for sid, value in data.items():
            _add(path, scores, sid, value, None)
    else:
        raise DataFormatError(path, f"cannot read scores from a JSON {type(data).__name__}")
    if not scores:
        raise DataFormatError(path, "no scores in file")
    return ScoreFile(str(path), scores, "scores-json", provenance=provenance)


def parse_scores_csv(path: Path, text: str) -> ScoreFile:
    """CSV with a header holding ``sentence_id`` and ``score``; rows are 1-based data rows."""
    reader = csv.DictReader(io.StringIO(text))
    cols = reader.fieldnames or []
    missing = [c for c in ("sentence_id", "score") if c not in cols]
    if missing:
        raise DataFormatError(path, f"missing column(s) {missing}; found {cols}")
    scores: dict[str, float] = {}
    for row, rec in enumerate(reader, start=1):
        raw = (rec.get("score") or "").strip()
        try:
            value: Any = float(raw)
        except ValueError:
            value = raw
        _add(path, scores, rec.get("sentence_id"), value, row)
    if not scores:
        raise DataFormatError(path, "no score rows")
    return ScoreFile(str(path), scores, "scores-csv")


def _load_json(path: Path) -> Any:
    text = read_text_strict(path)
    try:
        return json.loads(text)  # NaN / Infinity parse to floats and are rejected per entry
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None


def read_official_predictions(path: str | Path) -> ScoreFile:
    """Read an official StereoSet predictions JSON (strict: no other JSON shape)."""
    path = Path(path)
    return parse_official_predictions(path, _load_json(path))


def read_scores(path: str | Path) -> ScoreFile:
    """Read any accepted score file; the format is told by the suffix (``.csv``) or the JSON shape."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file does not exist")
    if path.suffix.lower() in (".csv", ".tsv"):
        return parse_scores_csv(path, read_text_strict(path))
    return parse_scores_json(path, _load_json(path))


def check_coverage(score_file: ScoreFile, items: Iterable[Item], *, gold: str = "gold data") -> None:
    """Every sentence of ``items`` has a score and every scored id is a sentence of ``items``.

    For official predictions, an id listed under the wrong task is an error too (evaluation.py
    would merge the lists and hide the mix-up).
    """
    task_of = {s.id: item.task for item in items for s in item.sentences}
    missing = [sid for sid in task_of if sid not in score_file.scores]
    unknown = [sid for sid in score_file.scores if sid not in task_of]
    problems = []
    if missing:
        problems.append(f"{len(missing)} sentence id(s) of {gold} have no score: {preview(missing)}")
    if unknown:
        problems.append(f"{len(unknown)} scored id(s) are not sentences of {gold}: {preview(unknown)}")
    if score_file.by_task:
        wrong = [sid for sid, task in score_file.by_task.items() if sid in task_of and task_of[sid] != task]
        if wrong:
            problems.append(f"{len(wrong)} id(s) are listed under the wrong task: {preview(wrong)}")
    if problems:
        raise DataFormatError(score_file.path, "; ".join(problems))
