"""Curated pair items -> Label Studio tasks with pre-annotations (``predictions``).

Each task's ``data`` holds the pair and what the annotator needs to judge it; its single
prediction carries the toolkit's automatic proposal: the pitfalls the rules found, the
dimension tag, the proposed decision and the proposed sentences (which pre-fill the text
areas). ``model_version`` names the tool version and the rule set
(:func:`stereoset_eval.curation.labelstudio.pitfalls.model_version`).

An instance judged by the validity rules (:mod:`stereoset_eval.curation.validity`) carries
its suggestion in ``data.auto_suggestion`` and its confidence in ``data.auto_confidence`` and
as the prediction's ``score`` (Label Studio sorts and filters tasks by it).

The proposed decision is ``remove`` when an automatic pitfall flag has severity
``error`` and ``keep`` otherwise: automatic edits (e.g. the gender swap) are already in
the proposed sentences, so keeping means accepting them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.foundation.atomic import atomic_write_json
from stereoset_eval.foundation.errors import StereosetEvalError
from stereoset_eval.foundation.items import PAIR_ROLES, Item
from stereoset_eval.curation.labelstudio import config as cfg
from stereoset_eval.curation.labelstudio.pitfalls import Pitfall, default_catalogue, model_version

NOT_EDITED = "(not edited)"


def original_texts(item: Item, parent: Item | None = None) -> dict[str, str]:
    """The sentences before automatic edits, per role, for display.

    With the parent item, each role's original is the parent sentence named by
    ``provenance.sentence_origins`` (default: the same role). Without it, the recorded
    edits are reverted (:func:`stereoset_eval.curation.gender_swap.revert_edits`); when they do not line
    up with the sentence, the edits themselves are listed. Unknown stays explicit.
    """
    from stereoset_eval.curation.gender_swap import revert_edits

    origins = dict(item.provenance.sentence_origins)
    out: dict[str, str] = {}
    for role in PAIR_ROLES:
        text = None
        if parent is not None and any(s.role == origins.get(role, role) for s in parent.sentences):
            text = parent.text(origins.get(role, role))
        else:
            edits = [e for e in item.provenance.edits if e.sentence_role == role]
            if edits:
                try:
                    text = revert_edits(item.text(role), edits, role)
                except ValueError:
                    text = "edits: " + "; ".join(f"token {e.index}: {e.old!r} -> {e.new!r}" for e in edits)
        out[role] = NOT_EDITED if text is None or text == item.text(role) else text
    return out


def _review_suggestion(item: Item) -> dict[str, Any] | None:
    from stereoset_eval.curation.apply_decisions import SUGGESTION_FLAG

    found = [f for f in item.flags if f.rule == SUGGESTION_FLAG]
    return dict(found[-1].evidence) if found else None


def proposed_decision(item: Item, pitfalls: Sequence[Pitfall]) -> str:
    """The run's suggestion for a queued item (``remove`` for a removal or a drop), else ``remove`` if an
    automatic pitfall flag has severity error, else ``keep``."""
    queued = _review_suggestion(item)
    if queued is not None and not str(queued.get("slot_suggestion", "")).startswith("undecided"):
        return "remove" if queued.get("slot_suggestion") in ("remove", "drop") else "keep"
    automatic = {p.name for p in pitfalls if p.automatic}
    return "remove" if any(f.rule in automatic and f.severity == "error" for f in item.flags) else "keep"


def _choices(name: str, values: Iterable[str]) -> dict[str, Any]:
    return {"from_name": name, "to_name": cfg.ANCHOR, "type": "choices", "value": {"choices": list(values)}}


def prediction_for(item: Item, pitfalls: Sequence[Pitfall]) -> dict[str, Any]:
    """The automatic proposal for ``item`` as a Label Studio prediction."""
    names = {p.name for p in pitfalls}
    found = sorted({f.rule for f in item.flags if f.rule in names})
    result: list[dict[str, Any]] = []
    if found:
        result.append(_choices(cfg.PITFALLS, found))
    if item.dimension is not None:
        if item.dimension not in cfg.DIMENSIONS:
            raise StereosetEvalError(
                f"item {item.id}: dimension {item.dimension!r} is not one of {list(cfg.DIMENSIONS)}"
            )
        result.append(_choices(cfg.DIMENSION, [item.dimension]))
    result.append(_choices(cfg.DECISION, [proposed_decision(item, pitfalls)]))
    for role in PAIR_ROLES:
        result.append({
            "from_name": cfg.EDITED[role], "to_name": role, "type": "textarea",
            "value": {"text": [item.text(role)]},
        })
    pred: dict[str, Any] = {"model_version": model_version(pitfalls), "result": result}
    conf = _confidence(item)
    if conf is not None:
        pred["score"] = conf  # Label Studio's prediction score: sort and filter tasks by it
    return pred


def _confidence(item: Item) -> float | None:
    from stereoset_eval.curation.validity import confidence_of

    return confidence_of(item)


def suggestion_of(item: Item) -> str:
    """The automatic suggestion recorded on ``item``: the review queue's, then validity/direction ("" when none)."""
    from stereoset_eval.curation.apply_decisions import SUGGESTION_FLAG

    msgs = [f.message for f in item.flags if f.rule in (SUGGESTION_FLAG, "stereotype_validity", "wrong_direction")]
    return " | ".join(msgs)


def item_to_task(item: Item, pitfalls: Sequence[Pitfall], *, parent: Item | None = None) -> dict[str, Any]:
    """One Label Studio task (``data`` + ``predictions``) for a pair item."""
    if not item.is_pair:
        raise StereosetEvalError(f"item {item.id} ({item.source}) is not a pair item; curate it into pairs first")
    originals = original_texts(item, parent)
    findings = [f"[{f.severity}] {f.rule}: {f.message}" for f in item.flags]
    data = {
        "item_id": item.id,
        "source": item.source,
        "bias_type": item.bias_type,
        "direction": item.direction or "",
        "derived_from": item.provenance.derived_from or "",
        "sent_more": item.text("sent_more"),
        "sent_less": item.text("sent_less"),
        "orig_sent_more": originals["sent_more"],
        "orig_sent_less": originals["sent_less"],
        "auto_findings": "\n".join(findings) if findings else "none",
        "auto_suggestion": suggestion_of(item) or "none",
        "auto_confidence": "" if _confidence(item) is None else f"{_confidence(item):.2f}",
        # the review queue's order: what a decision on the item would change (tasks are pushed in this order)
        "review_impact": int((_review_suggestion(item) or {}).get("impact", 0)),
    }
    return {"data": data, "predictions": [prediction_for(item, pitfalls)]}


def build_tasks(
    items: Sequence[Item],
    *,
    pitfalls: Sequence[Pitfall] | None = None,
    parents: Mapping[str, Item] | None = None,
) -> list[dict[str, Any]]:
    """Tasks for ``items``; ``parents`` (id -> item) shows originals of derived items.

    Raises:
        StereosetEvalError: duplicate item ids (annotations could not be told apart).
    """
    pitfalls = tuple(pitfalls) if pitfalls is not None else default_catalogue()
    parents = parents or {}
    seen: set[str] = set()
    tasks = []
    for item in items:
        if item.id in seen:
            raise StereosetEvalError(f"duplicate item id {item.id!r}: every task must name one item")
        seen.add(item.id)
        tasks.append(item_to_task(item, pitfalls, parent=parents.get(item.provenance.derived_from or "")))
    return tasks


def validate_tasks(tasks: Sequence[Mapping[str, Any]], xml: str) -> None:
    """Check tasks against the labeling config with the SDK's ``LabelInterface``.

    Every object's ``$variable`` must be in ``data`` and every prediction must be valid.
    (``LabelInterface.validate_task`` is called on the data alone: in SDK 2.1.2 it
    cannot validate predictions itself.)
    """
    interface = cfg.label_interface_class()(xml)
    for task in tasks:
        item_id = task.get("data", {}).get("item_id")
        if not interface.validate_task({"data": dict(task.get("data", {}))}):
            raise StereosetEvalError(f"task of item {item_id} lacks data fields the config shows")
        for pred in task.get("predictions", ()):
            errors = interface.validate_prediction(pred, return_errors=True)
            if errors:
                raise StereosetEvalError(f"prediction for item {item_id} is invalid: {errors}")


def write_tasks_json(path: str | Path, tasks: Sequence[Mapping[str, Any]]) -> Path:
    """Write tasks as a JSON list Label Studio imports by hand (atomic write)."""
    return atomic_write_json(path, list(tasks))
