"""Parse a Label Studio full JSON export into annotation records and reported issues.

Only the full ``JSON`` export is accepted (tasks with ``data``, ``annotations`` and
``predictions``); ``JSON_MIN`` drops annotation ids, cancellations and annotators, so it
is refused with a message saying which export to use. Nothing is dropped silently: every
annotation or task that does not become an :class:`Annotation` is an :class:`Issue`:

* ``never_annotated``  — a task without any annotation;
* ``cancelled``        — an annotation the annotator skipped (``was_cancelled``);
* ``empty``            — a submitted annotation with an empty result;
* ``superseded``       — an older annotation of the same annotator on the same item
  (the most recent one is used);
* ``missing_field``    — an annotation lacking the decision, the dimension, or the edited
  text of an ``edit`` decision (the annotation is kept; the field counts as absent);
* ``unknown_value``    — a choice that is not in the project's config (ignored);
* ``unknown_item``     — a task without ``data.item_id`` (cannot be matched to an item).

An unchecked checkbox group leaves no result in Label Studio, so a missing ``pitfalls``
result means "no pitfall", not a missing field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from stereoset_eval.foundation.errors import DataFormatError
from stereoset_eval.foundation.files import check_input_file
from stereoset_eval.foundation.items import PAIR_ROLES
from stereoset_eval.curation.labelstudio import config as cfg

ISSUE_KINDS: tuple[str, ...] = (
    "never_annotated", "cancelled", "empty", "superseded", "missing_field", "unknown_value", "unknown_item",
)


@dataclass(frozen=True)
class Annotation:
    """One usable human annotation of one item.

    ``edited`` holds the text-area contents per role (``sent_more``/``sent_less``) when
    present; ``time`` is ``updated_at`` (else ``created_at``) as exported, ISO 8601.
    """

    item_id: str
    task_id: int | None  # None when the exported task has no id
    annotation_id: int
    annotator: str
    time: str
    decision: str | None
    dimension: str | None
    pitfalls: frozenset[str]
    edited: Mapping[str, str] = field(default_factory=dict)
    comment: str | None = None


@dataclass(frozen=True)
class Issue:
    """Something in the export that did not become (part of) an :class:`Annotation`."""

    kind: str
    task_id: int | None
    item_id: str | None
    annotation_id: int | None = None
    annotator: str | None = None
    detail: str = ""


@dataclass(frozen=True)
class ParsedExport:
    """Usable annotations, reported issues, and every item id seen in the export."""

    annotations: tuple[Annotation, ...]
    issues: tuple[Issue, ...]
    item_ids: tuple[str, ...]
    n_tasks: int
    pitfall_names: tuple[str, ...]

    def issues_table(self) -> pd.DataFrame:
        cols = ["kind", "task_id", "item_id", "annotation_id", "annotator", "detail"]
        return pd.DataFrame([{c: getattr(i, c) for c in cols} for i in self.issues], columns=cols)

    def issue_counts(self) -> dict[str, int]:
        counts = {k: 0 for k in ISSUE_KINDS}
        for i in self.issues:
            counts[i.kind] += 1
        return counts

    def annotators(self) -> tuple[str, ...]:
        return tuple(sorted({a.annotator for a in self.annotations}))


def time_key(a: Annotation) -> tuple[datetime, int]:
    """Sort key "most recent last": annotation time (unparsable/absent = oldest), then id."""
    try:
        t = datetime.fromisoformat(a.time.replace("Z", "+00:00"))
        t = t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    except ValueError:
        t = datetime.min.replace(tzinfo=timezone.utc)
    return t, a.annotation_id or 0


def annotator_name(completed_by: Any) -> str:
    """Email of the annotator when exported as a user object, else ``user:<id>``."""
    if isinstance(completed_by, Mapping):
        email = completed_by.get("email")
        return str(email) if email else f"user:{completed_by.get('id')}"
    return f"user:{completed_by}"


def load_export(path: str | Path) -> list[dict[str, Any]]:
    """Read an export file (JSON list of tasks); DataFormatError naming the file if not."""
    path = check_input_file(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataFormatError(path, f"not a JSON file: {exc}") from None
    check_export_shape(data, path)
    return data


def check_export_shape(data: Any, path: str | Path | None = None) -> None:
    """Raise DataFormatError unless ``data`` is a full Label Studio JSON export."""
    if not isinstance(data, list):
        raise DataFormatError(path, f"expected a JSON list of tasks, got {type(data).__name__}")
    for i, task in enumerate(data):
        if not isinstance(task, Mapping):
            raise DataFormatError(path, f"task is a {type(task).__name__}, expected an object", row=i)
        if "annotations" not in task:
            hint = (" — this looks like a JSON_MIN export; export in JSON format"
                    if "annotator" in task or "annotation_id" in task else "")
            raise DataFormatError(path, f"task has no 'annotations' list{hint}", row=i, field="annotations")
        if not isinstance(task.get("data"), Mapping):
            raise DataFormatError(path, "task has no 'data' object", row=i, field="data")
        if not isinstance(task["annotations"], list):
            raise DataFormatError(path, "'annotations' is not a list", row=i, field="annotations")
        for j, ann in enumerate(task["annotations"]):
            where = f"annotations[{j}]"
            if not isinstance(ann, Mapping):
                kind = "null" if ann is None else f"a {type(ann).__name__}"
                raise DataFormatError(path, f"annotation {j} of task {task.get('id')} is {kind}, expected an object "
                                            "(a damaged or hand-edited export?)", row=i, field=where)
            if ann.get("completed_by") in (None, "", {}):
                raise DataFormatError(path, f"annotation {ann.get('id')} of task {task.get('id')} has no annotator "
                                            "(completed_by): annotators cannot be told apart, so agreement and "
                                            "adjudication would merge them; export again with annotator "
                                            "information", row=i, field=f"{where}.completed_by")
            result = ann.get("result")
            if result is not None and not (isinstance(result, list) and all(isinstance(r, Mapping) for r in result)):
                raise DataFormatError(path, f"annotation {ann.get('id')} of task {task.get('id')}: 'result' must be "
                                            f"a list of objects, got {type(result).__name__}", row=i,
                                      field=f"{where}.result")
            for r in result or []:  # choices / text of any JSON type (found by tests/test_fuzz_readers.py)
                problem = _value_problem(r.get("value"))
                if problem:
                    raise DataFormatError(path, f"annotation {ann.get('id')} of task {task.get('id')}: result "
                                                f"{r.get('from_name')!r}: {problem}", row=i, field=f"{where}.result")
    projects = sorted({str(t["project"]) for t in data if t.get("project") is not None})
    if len(projects) > 1:
        raise DataFormatError(path, f"the export mixes tasks of {len(projects)} projects ({', '.join(projects)}); "
                                    "export one project at a time")


def _value_problem(value: Any) -> str | None:
    """What is wrong with a result's ``value`` (None when it is an object whose ``choices`` are strings and
    whose ``text`` is a string or a list of strings)."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        return f"'value' must be an object, got {type(value).__name__}"
    choices = value.get("choices", [])
    if not (isinstance(choices, list) and all(isinstance(c, str) for c in choices)):
        return f"'value.choices' must be a list of strings, got {json.dumps(choices, default=str)[:60]}"
    text = value.get("text", "")
    if not (isinstance(text, str) or (isinstance(text, list) and all(isinstance(t, str) for t in text))):
        return f"'value.text' must be a string or a list of strings, got {json.dumps(text, default=str)[:60]}"
    return None


def _results_by_control(result: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in result:
        name, value = r.get("from_name"), r.get("value") or {}
        if not isinstance(name, str):  # a result without a control name answers no question
            continue
        if "choices" in value:
            out[name] = list(value["choices"])
        elif "text" in value:
            text = value["text"]
            out[name] = "\n".join(text) if isinstance(text, list) else str(text)
    return out


def _check_controls(tasks: Sequence[Mapping[str, Any]], source: str | Path | None) -> None:
    """The annotations must use this toolkit's controls; another project's config shares none of them."""
    ours = {cfg.PITFALLS, cfg.DIMENSION, cfg.DECISION, cfg.COMMENT, *cfg.EDITED.values()}
    seen = {str(r.get("from_name")) for t in tasks for a in t["annotations"] for r in (a.get("result") or [])}
    if seen and not seen & ours:
        shown = ", ".join(sorted(seen)[:6])
        raise DataFormatError(source, f"the annotations use the controls {shown} and none of this toolkit's "
                                      f"({', '.join(sorted(ours))}): this is the export of a project with another "
                                      "labeling config")


def parse_export(
    tasks: Sequence[Mapping[str, Any]],
    *,
    pitfall_names: Sequence[str],
    source: str | Path | None = None,
) -> ParsedExport:
    """Turn a full JSON export into annotations + issues (see the module docstring).

    Args:
        tasks: the export, a list of task objects.
        pitfall_names: the checkbox values of the project's config (unknown ones are
            reported as ``unknown_value`` and ignored).
        source: the file or URL it came from, for error messages.
    """
    check_export_shape(tasks, source)
    known = {cfg.PITFALLS: set(pitfall_names), cfg.DIMENSION: set(cfg.DIMENSION_CHOICES),
             cfg.DECISION: set(cfg.DECISIONS)}
    issues: list[Issue] = []
    candidates: list[Annotation] = []
    item_ids: list[str] = []
    for task in tasks:
        task_id = task.get("id")
        item_id = task["data"].get("item_id")
        if not item_id:
            issues.append(Issue("unknown_item", task_id, None, detail=f"task has no data.item_id; its "
                                f"{len(task['annotations'])} annotation(s) cannot be matched to an item"))
            continue
        item_id = str(item_id)
        if item_id not in item_ids:
            item_ids.append(item_id)
        if not task["annotations"]:
            issues.append(Issue("never_annotated", task_id, item_id))
            continue
        for ann in task["annotations"]:
            ann_id, who = ann.get("id"), annotator_name(ann.get("completed_by"))
            if ann.get("was_cancelled"):
                issues.append(Issue("cancelled", task_id, item_id, ann_id, who, "annotation was cancelled (skipped)"))
                continue
            if not ann.get("result"):
                issues.append(Issue("empty", task_id, item_id, ann_id, who, "submitted with an empty result"))
                continue
            values = _results_by_control(ann["result"])
            for control, allowed in known.items():
                bad = [v for v in values.get(control, []) if v not in allowed]
                if bad:
                    issues.append(Issue("unknown_value", task_id, item_id, ann_id, who,
                                        f"{control}: {bad} not in the config; ignored"))
                    values[control] = [v for v in values[control] if v in allowed]
            decision = (values.get(cfg.DECISION) or [None])[0]
            dimension = (values.get(cfg.DIMENSION) or [None])[0]
            edited = {r: values[cfg.EDITED[r]].strip() for r in PAIR_ROLES
                      if (values.get(cfg.EDITED[r]) or "").strip()}
            missing = [f for f, v in ((cfg.DECISION, decision), (cfg.DIMENSION, dimension)) if v is None]
            if decision == "edit":
                missing += [cfg.EDITED[r] for r in PAIR_ROLES if r not in edited]
            for name in missing:
                issues.append(Issue("missing_field", task_id, item_id, ann_id, who, f"no value for {name!r}"))
            candidates.append(Annotation(
                item_id=item_id, task_id=task_id, annotation_id=ann_id, annotator=who,
                time=str(ann.get("updated_at") or ann.get("created_at") or ""),
                decision=decision, dimension=dimension,
                pitfalls=frozenset(values.get(cfg.PITFALLS, [])), edited=edited,
                comment=(values.get(cfg.COMMENT) or "").strip() or None,
            ))
    _check_controls(tasks, source)
    latest: dict[tuple[str, str], Annotation] = {}
    for a in sorted(candidates, key=time_key):
        key = (a.item_id, a.annotator)
        if key in latest:
            old = latest[key]
            issues.append(Issue("superseded", old.task_id, old.item_id, old.annotation_id, old.annotator,
                                f"replaced by the later annotation {a.annotation_id} of the same annotator"))
        latest[key] = a
    annotations = tuple(sorted(latest.values(), key=lambda a: (a.item_id, a.annotator)))
    return ParsedExport(annotations, tuple(issues), tuple(item_ids), len(tasks), tuple(pitfall_names))
