"""Turn routed records into the outputs: automatic rows, reviewed rows, and a prepared review queue.

* An **automatic** item contributes its suggested instances (``decided_by = rule:<name>`` or
  ``judge:<model>``, ``confidence`` = the lowest reliability bound of its rules) and its removals.
* A **reviewed** item contributes what the person decided, as it is (``decided_by = review``).
* An item that **needs review** has no automatic rows: it goes to the review queue with every
  candidate instance, the suggestion, the evidence and the reason it was not decided, ordered by
  what a decision would change (:func:`impact`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from stereoset_eval.curation.decision_record import ItemRecord
from stereoset_eval.curation.reliability import Routing
from stereoset_eval.curation.reviewed import Review
from stereoset_eval.foundation.items import Flag, Item, Sentence

REVIEW_DECIDER = "review"
SUGGESTION_FLAG = "review_suggestion"
REVIEWED_FLAG = "human_review"


@dataclass
class Applied:
    """The outputs of one run after routing."""

    items: list[Item] = field(default_factory=list)
    decided: dict[str, tuple[str, float | None]] = field(default_factory=dict)  # item id -> (decided_by, confidence)
    removed: list[dict[str, Any]] = field(default_factory=list)
    queue: list[Item] = field(default_factory=list)


def impact(record: ItemRecord) -> int:
    """How much a decision on ``record`` changes the curated dataset: pairs it may add or remove, plus
    every label swap or text edit it would confirm."""
    pairs = max(1, len(record.candidates))
    changes = sum(1 for d in record.decided if d.action in ("swap", "remove", "drop")
                  or (d.component == "text" and d.rule not in ("source_text", "target_swap")))
    return pairs + changes


def _slot_id(source_id: str, slot: str) -> str:
    return source_id if slot in ("", "as_is") else f"{source_id}#{slot}"


def _reviewed_instance(record: ItemRecord, slot: str, review: Review) -> Item | None:
    from stereoset_eval.curation.dimensions import DIMENSIONS, DimensionTag, with_tag

    g = review.instances[slot]
    base = record.candidates.get(slot) or record.kept.get(slot) or record.pair
    if base is None:
        return None
    from dataclasses import replace as dc_replace

    from stereoset_eval.curation.labelstudio.human_edits import substitution_edits

    new_id = _slot_id(record.source_id, slot)
    more_id, less_id = f"{new_id}:more", f"{new_id}:less"
    origins = dict(base.provenance.sentence_origins) or {"sent_more": "sent_more", "sent_less": "sent_less"}
    source = record.pair or base
    edits: list = []
    rewritten = []
    for role, text in (("sent_more", g.sent_more), ("sent_less", g.sent_less)):
        origin_role = origins.get(role, role)
        if origin_role not in ("sent_more", "sent_less"):
            origin_role = role
        found = substitution_edits(source.text(origin_role), text, role)
        if found is None:  # inserted or deleted words: the flag keeps the person's sentence
            rewritten.append(role)
        else:
            edits += list(found)
    flag = Flag(REVIEWED_FLAG, new_id, "info", f"decided in review ({review.origin})",
                {"origin": review.origin, "slot": slot, "rewritten_beyond_substitutions": rewritten})
    prov = dc_replace(base.provenance, edits=tuple(edits), sentence_origins=tuple(
        sorted((r, origins.get(r, r) if origins.get(r, r) in ("sent_more", "sent_less") else r)
               for r in ("sent_more", "sent_less"))))
    inst = base.replace(id=new_id, sentences=(Sentence(more_id, g.sent_more, "sent_more"),
                                              Sentence(less_id, g.sent_less, "sent_less")), provenance=prov,
                        flags=tuple(f for f in base.flags if f.rule != SUGGESTION_FLAG) + (flag,))
    label = g.dimension if g.dimension in DIMENSIONS else None
    return with_tag(inst, DimensionTag(new_id, label, "human", (), review.origin))


def _suggestion(record: ItemRecord, slot: str) -> str:
    if record.holds:
        return "undecided: " + "; ".join(f"{d.rule}" for d in record.holds)
    acts = [d.action for d in record.decided if d.component in ("item", "instance") and (d.slot == slot or not d.slot)]
    return acts[0] if acts else "keep"


def _queued(record: ItemRecord, routing: Routing) -> list[Item]:
    """The candidates of an item that needs a person, each with the suggestion and its evidence."""
    evidence = {"suggestion": record.suggestion, "why_review": routing.reason, "impact": impact(record),
                "decisions": [d.to_dict() for d in record.decided], "reasons": dict(record.reasons)}
    candidates = dict(record.candidates) or ({"as_is": record.pair} if record.pair is not None else {})
    out = []
    for slot, inst in sorted(candidates.items()):
        if inst is None:
            continue
        sugg = _suggestion(record, slot)
        flag = Flag(SUGGESTION_FLAG, inst.id, "warning", f"needs review ({routing.reason}); suggestion: {sugg}",
                    {**evidence, "slot": slot, "slot_suggestion": sugg})
        out.append(inst.replace(flags=tuple(f for f in inst.flags if f.rule != SUGGESTION_FLAG) + (flag,)))
    return out


def apply_routing(records: Sequence[ItemRecord], routing: Mapping[str, Routing],
                  reviews: Mapping[str, Review]) -> Applied:
    """The run's outputs from routed records (see the module docstring)."""
    out = Applied()
    queued: list[tuple[int, str, list[Item]]] = []
    for rec in records:
        review = reviews.get(rec.source_id)
        if review is not None:
            kept_any = False
            for slot in review.instances:
                if review.kept_slot(slot) is None:
                    continue
                inst = _reviewed_instance(rec, slot, review)
                if inst is not None:
                    out.items.append(inst)
                    out.decided[inst.id] = (REVIEW_DECIDER, None)
                    kept_any = True
            if not kept_any:
                out.removed.append({"item_id": rec.source_id, "source_id": rec.source_id, "status": "removed",
                                    "rule": "", "reason": f"removed in review: {review.reason or 'no reason given'}",
                                    "decided_by": REVIEW_DECIDER, "confidence": None})
            for slot, g in sorted(review.instances.items()):
                if kept_any and not g.kept:
                    out.removed.append({"item_id": _slot_id(rec.source_id, slot), "source_id": rec.source_id,
                                        "status": "removed", "rule": "", "reason": "instance dropped in review",
                                        "decided_by": REVIEW_DECIDER, "confidence": None})
            continue
        r = routing[rec.source_id]
        if r.status != "automatic":
            queued.append((-impact(rec), rec.source_id, _queued(rec, r)))
            continue
        for slot, inst in rec.kept.items():
            out.items.append(inst)
            out.decided[inst.id] = (r.decided_by, r.confidence)
        for d in rec.decided:
            if d.action in ("remove", "drop"):
                out.removed.append({"item_id": _slot_id(rec.source_id, d.slot) if d.action == "drop" else rec.source_id,
                                    "source_id": rec.source_id, "status": "removed", "rule": d.rule,
                                    "reason": rec.reasons.get(d.slot, ""), "decided_by": f"rule:{d.rule}"
                                    if not d.rule.startswith("judge:") else d.rule, "confidence": r.confidence})
    for _, _, items in sorted(queued):
        out.queue.extend(items)
    return out
