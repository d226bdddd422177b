"""The score file: one versioned module that writes what ``stereoset-eval score`` produces and
reads every score file ``report`` and ``evaluate-predictions`` accept.

Written (:data:`FORMAT`, :data:`SCHEMA_VERSION` 1), ``scores.json``::

    {"format": "stereoset-eval-scores", "schema_version": 1,
     "provenance": {...ScoreProvenance, without the per-run timing/cache blocks...},
     "methods": {"<method>": {"records": [{"sentence_id", "score", ...}, ...]}}}

The provenance is embedded, so a score file says by itself which model, revision and method
produced it; the per-run ``run`` blocks (time, cache use) stay in ``provenance.json`` beside
it, so the same command writes byte-identical score files whether it computed or read the cache.

Read (the format is told by the suffix and the content; :attr:`ScoreFile.format`):

* ``stereoset-eval-scores`` — the file above (a newer schema is refused, never guessed at);
* ``stereoset-predictions`` — the official StereoSet predictions JSON,
  ``{"intrasentence": [{"id", "score"}], "intersentence": [...]}``;
* ``scores-csv`` — a CSV with ``sentence_id`` and exactly one score column, ``score``;
* ``scores-json`` — files of earlier versions and other tools: ``{"scores": {id: score}}`` or
  ``{"records": [{"sentence_id", "score"}]}`` (each optionally with a ``provenance`` block),
  a list of such records, a flat ``{id: score}``, or ``{method: {"records": [...]}}`` (what
  ``score`` wrote before schema 1; its sibling ``provenance.json`` is not read — pass
  ``--model`` / ``--method``).

Ambiguity is an error, never a guess: a JSON with both ``scores`` and ``records``, a CSV with
two score columns. Every problem is one :class:`~stereoset_eval.foundation.errors.DataFormatError`
naming the file, the entry and the field; :func:`check_coverage` then compares the ids with
the gold items (missing and unknown ids are listed, never skipped).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from numbers import Real
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.foundation.atomic import atomic_write_json
from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.files import read_text_strict
from stereoset_eval.foundation.items import STEREOSET_TASKS, Item
from stereoset_eval.foundation.provenance import ProvenanceError, ScoreProvenance, ToolInfo

FORMAT = "stereoset-eval-scores"
SCHEMA_VERSION = 1
PREDICTION_TASKS: tuple[str, ...] = STEREOSET_TASKS


@dataclass(frozen=True)
class ScoreFile:
    """Scores read from one file.

    Attributes:
        scores: sentence id -> score.
        format: the format read (see the module docstring).
        by_task: for official predictions, the task list each id was listed under.
        provenance: what produced the scores, typed (None when the file does not say).
        recorded: the file's provenance block verbatim (empty when it has none).
        schema_version: the score-file schema (None for files of other formats).
    """

    path: str
    scores: Mapping[str, float]
    format: str
    by_task: Mapping[str, str] = field(default_factory=dict)
    provenance: ScoreProvenance | None = None
    recorded: Mapping[str, Any] = field(default_factory=dict)
    schema_version: int | None = None


# --- writing -------------------------------------------------------------------------------


def score_document(records: Mapping[str, Sequence[Mapping[str, Any]]], provenance: ScoreProvenance) -> dict[str, Any]:
    """The score file's content: per method its records, with the stable provenance embedded."""
    return {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "provenance": provenance.stable().to_dict(),
        "methods": {method: {"records": [dict(r) for r in recs]} for method, recs in records.items()},
    }


def write_score_file(
    path: str | Path, records: Mapping[str, Sequence[Mapping[str, Any]]], provenance: ScoreProvenance
) -> Path:
    """Write :func:`score_document` atomically; returns the path."""
    return atomic_write_json(Path(path), score_document(records, provenance))


# --- reading -------------------------------------------------------------------------------


def preview(ids: Iterable[str], *, limit: int = 5) -> str:
    """``'a', 'b', 'c' … (+N more)``: the first few of ``ids`` and how many were left out."""
    ids = list(ids)
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" … (+{len(ids) - limit} more)" if len(ids) > limit else "")


def _short(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error message stays one readable line."""
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _score(path: Path, value: Any, *, sentence_id: str, row: int | None) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise DataFormatError(
            path, f"score of sentence id {sentence_id!r} is {_short(value)}, not a number", row=row, field="score"
        )
    try:
        x = float(value)
    except OverflowError:  # a JSON integer of hundreds of digits (found by tests/test_fuzz_readers.py)
        raise DataFormatError(
            path, f"score of sentence id {sentence_id!r} is {_short(value)}, too large for a number", row=row,
            field="score") from None
    if not math.isfinite(x):
        raise DataFormatError(
            path, f"score of sentence id {sentence_id!r} is {value!r}, not a finite number", row=row, field="score"
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


def _method_blocks(path: Path, methods: Any, scores: dict[str, float], *, where: str) -> None:
    if not isinstance(methods, dict) or not methods:
        raise DataFormatError(path, f"{where} must map each method to {{\"records\": [...]}}", field=where)
    for method, block in methods.items():
        if not isinstance(block, dict) or "records" not in block:
            raise DataFormatError(path, f"{where}.{method} must be an object with records", field=where)
        _records(path, block["records"], scores, where=f"{method}.records")


def parse_score_document(path: Path, data: Mapping[str, Any]) -> ScoreFile:
    """A file written by :func:`write_score_file` (any schema up to :data:`SCHEMA_VERSION`)."""
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataFormatError(path, f"schema_version must be a positive integer, got {_short(version)}",
                              field="schema_version")
    if version > SCHEMA_VERSION:
        raise DataFormatError(path, f"score file schema {version} is newer than this stereoset-eval reads "
                                    f"({SCHEMA_VERSION}); upgrade stereoset-eval", field="schema_version")
    recorded = data.get("provenance")
    if not isinstance(recorded, dict):
        raise DataFormatError(path, "the provenance block is missing or not an object", field="provenance")
    try:
        provenance = ScoreProvenance.from_dict(recorded)
    except (ProvenanceError, KeyError, TypeError, AttributeError) as exc:
        raise DataFormatError(path, f"unreadable provenance block: {exc}", field="provenance") from None
    scores: dict[str, float] = {}
    _method_blocks(path, data.get("methods"), scores, where="methods")
    if not scores:
        raise DataFormatError(path, "no scores in file")
    return ScoreFile(str(path), scores, FORMAT, provenance=provenance, recorded=recorded, schema_version=version)


def legacy_provenance(block: Mapping[str, Any]) -> ScoreProvenance:
    """The typed reading of a provenance block of an earlier version (the only place old shapes are read):
    a ``score`` command record (``runs``), one run's record (``model.id``, ``method.name``), or plain
    ``model`` / ``method`` strings."""
    if isinstance(block.get("runs"), Mapping) and block["runs"]:
        command: Mapping[str, Any] = block["command"] if isinstance(block.get("command"), Mapping) else {}
        runs = {p: r for p, r in block["runs"].items() if isinstance(r, Mapping)}
        models = {str(_name(r.get("model"), "id")) for r in runs.values()} - {"None"}
        return ScoreProvenance(
            ToolInfo.from_dict(block["tool"]) if "tool" in block else ToolInfo("stereoset-eval", "unknown", None),
            model=next(iter(models)) if len(models) == 1 else _name(command.get("model"), "id"),
            revision=_name(command.get("revision"), "id"),
            methods={p: m for p, r in runs.items() if (m := _name(r.get("method"), "name"))},
            benchmark=block.get("benchmark"), command=command,
        )
    method = _name(block.get("method"), "name")
    return ScoreProvenance(
        ToolInfo.from_dict(block["tool"]) if isinstance(block.get("tool"), (Mapping, str)) and block.get("tool")
        else ToolInfo("unknown", "unknown", None),
        model=_name(block.get("model"), "id"),
        revision=_name(block.get("model"), "revision") or _name(block.get("revision"), "id"),
        methods={"all": method} if method else {},
    )


def _name(value: Any, key: str) -> str | None:
    """``value`` when it is a plain value, else ``value[key]`` (older blocks nest them)."""
    if isinstance(value, Mapping):
        value = value.get(key)
    return str(value) if value not in (None, "") else None


def parse_scores_json(path: Path, data: Any) -> ScoreFile:
    """Any JSON form listed in the module docstring."""
    if isinstance(data, dict) and "format" in data:
        if data["format"] != FORMAT:
            raise DataFormatError(path, f"unknown score file format {_short(data['format'])}; expected {FORMAT!r}",
                                  field="format")
        return parse_score_document(path, data)
    if isinstance(data, dict) and data and set(data) <= set(PREDICTION_TASKS):
        return parse_official_predictions(path, data)
    scores: dict[str, float] = {}
    recorded: Mapping[str, Any] = {}
    if isinstance(data, list):
        _records(path, data, scores, where="records")
    elif isinstance(data, dict) and ("records" in data or "scores" in data):
        if "records" in data and "scores" in data:
            raise DataFormatError(path, "the file has both 'scores' and 'records': keep one, so that it is clear "
                                        "which scores to read")
        recorded = data.get("provenance") or {}
        if not isinstance(recorded, dict):
            raise DataFormatError(path, "'provenance' must be an object", field="provenance")
        if "records" in data:
            _records(path, data["records"], scores, where="records")
        else:
            if not isinstance(data["scores"], dict):
                raise DataFormatError(path, "'scores' must map sentence id -> score", field="scores")
            for sid, value in data["scores"].items():
                _add(path, scores, sid, value, None)
    elif isinstance(data, dict) and data and all(isinstance(v, dict) and "records" in v for v in data.values()):
        _method_blocks(path, data, scores, where="<top level>")  # `score` before schema 1
    elif isinstance(data, dict):
        for sid, value in data.items():
            _add(path, scores, sid, value, None)
    else:
        raise DataFormatError(path, f"cannot read scores from a JSON {type(data).__name__}")
    if not scores:
        raise DataFormatError(path, "no scores in file")
    provenance = legacy_provenance(recorded) if recorded else None
    return ScoreFile(str(path), scores, "scores-json", provenance=provenance, recorded=recorded)


def _score_columns(cols: Sequence[str]) -> list[str]:
    """Columns that hold a score: ``score`` and any other column named ``score`` or ``*_score`` (any case)."""
    return [c for c in cols if c.strip().lower() == "score" or c.strip().lower().endswith(("_score", " score"))]


def parse_scores_csv(path: Path, text: str) -> ScoreFile:
    """CSV with a header holding ``sentence_id`` and one score column ``score``; rows are 1-based data rows."""
    reader = csv.DictReader(io.StringIO(text))
    cols = reader.fieldnames or []
    missing = [c for c in ("sentence_id", "score") if c not in cols]
    if missing:
        raise DataFormatError(path, f"missing column(s) {missing}; found {cols}")
    score_cols = _score_columns(cols)
    if len(score_cols) > 1:
        raise DataFormatError(path, f"{len(score_cols)} score columns {score_cols}: keep one, named 'score', so "
                                    "that it is clear which scores to read")
    scores: dict[str, float] = {}
    row = 0
    try:
        for row, rec in enumerate(reader, start=1):
            raw = (rec.get("score") or "").strip()
            try:
                value: Any = float(raw)
            except ValueError:
                value = raw
            _add(path, scores, rec.get("sentence_id"), value, row)
    except csv.Error as exc:  # a lone carriage return outside quotes (found by tests/test_fuzz_readers.py)
        raise DataFormatError(path, f"malformed CSV: {exc}", row=row + 1) from None
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
    """Read any accepted score file; the format is told by the suffix (``.csv``) or the JSON content."""
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
