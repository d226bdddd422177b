"""Grading a rule's decision against a person's (the unit of every reliability estimate).

A removal agrees when the person removed the item; a drop when the person does not keep that
instance; a keep or swap when the person keeps it in the same direction; the swap rules when the
two sentences differ by the same words as the person's; the other text rules when the curated
pair is identical; a dimension tag when the labels are equal. A ``hold`` proposes nothing and is
not graded. :func:`measured_agreement` counts an item's outcome the way ``curate-eval`` does.
"""

from __future__ import annotations

import re
from typing import Any

from stereoset_eval.curation.decision_record import Decided, ItemRecord
from stereoset_eval.curation.reviewed import Review


_WORD = re.compile(r"[a-z0-9']+")


def _loose(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


def same_direction(ours: Any, slot: str, review: Review) -> bool:
    """Whether our instance ``ours`` reads slot ``slot`` in the person's direction (not crossed)."""
    g = review.instances[slot]
    om, ol, gm, gl = (_loose(ours.text("sent_more")), _loose(ours.text("sent_less")), _loose(g.sent_more),
                      _loose(g.sent_less))
    if om == gm or ol == gl:
        return True
    return not (om == gl or ol == gm)  # crossed: the person reads the other direction


#: text rules that make the gender swap: graded on the words the two sentences differ by, not on the
#: rest of the wording (a typo the person fixed elsewhere is not the swap's fault)
SWAP_RULES: frozenset[str] = frozenset({"target_swap", "name_swap", "swap_completion", "incomplete_swap_repaired"})


def swap_diff(more: str, less: str) -> tuple[tuple[str, str], ...]:
    """The (sent_more words, sent_less words) of every differing span, lower case, punctuation aside.

    >>> swap_diff("Her mother was kind.", "Her father was kind")
    (('mother', 'father'),)
    """
    import difflib

    a, b = _loose(more), _loose(less)
    ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return tuple((" ".join(a[i1:i2]), " ".join(b[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal")


def same_swap(ours: Any, slot: str, review: Review) -> bool:
    """Whether our instance ``ours`` swaps the same words as the person's instance ``slot`` (:func:`swap_diff`)."""
    g = review.instances[slot]
    return swap_diff(ours.text("sent_more"), ours.text("sent_less")) == swap_diff(g.sent_more, g.sent_less)


def grade(d: Decided, record: ItemRecord, review: Review) -> bool | None:
    """Whether decision ``d`` agrees with the person's ``review`` (None: not gradable)."""
    if d.action == "hold":
        return None
    if d.component == "item":
        return (not review.keep) if d.action == "remove" else review.keep
    gk = review.kept_slot(d.slot) is not None
    if d.component == "instance":
        if d.action == "drop":
            return not gk
        if not gk:
            return False
        ours = record.kept.get(d.slot)
        return True if ours is None else same_direction(ours, d.slot, review)
    ours = record.kept.get(d.slot)
    if not gk or ours is None:
        return None
    g = review.instances[d.slot]
    if d.component == "text":
        if d.rule in SWAP_RULES:  # the swap itself: the words that differ between the two sentences
            return same_swap(ours, d.slot, review)
        return (ours.text("sent_more").strip(), ours.text("sent_less").strip()) == (g.sent_more.strip(), g.sent_less.strip())
    if d.component == "dimension":
        return d.action == g.dimension
    return None


def measured_agreement(record: ItemRecord, review: Review) -> dict[str, tuple[int, int]]:
    """Per component, (agreeing, compared) of the item's outcome with the person's, as curate-eval counts them."""
    out: dict[str, tuple[int, int]] = {}
    ours_keep = bool(record.kept)
    out["item"] = (int(ours_keep == review.keep), 1)
    if ours_keep and review.keep:
        slots = set(record.kept) | {s for s, i in review.instances.items()} | {
            d.slot for d in record.decided if d.component == "instance" and d.slot}
        agree = sum(int((s in record.kept) == (review.kept_slot(s) is not None)) for s in slots)
        out["instance"] = (agree, len(slots))
        both = [s for s in record.kept if review.kept_slot(s) is not None]
        text = [int((record.kept[s].text("sent_more").strip(), record.kept[s].text("sent_less").strip())
                    == (review.instances[s].sent_more.strip(), review.instances[s].sent_less.strip())) for s in both]
        dims = [int((record.kept[s].dimension or "") == review.instances[s].dimension) for s in both]
        out["text"] = (sum(text), len(text))
        out["dimension"] = (sum(dims), len(dims))
    return out
