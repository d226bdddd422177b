"""What the rules proposed for one source item, decision by decision, with the rule that owns each.

A curation run makes, per source item, up to four kinds of decision (``component``):

* ``item`` — the whole pair is removed (``remove``), or a rule cannot decide it (``hold``);
* ``instance`` — an instance slot (``m``, ``l``, ``as_is``) is kept (``keep``), kept with its
  labels swapped (``swap``) or dropped (``drop``); or held;
* ``text`` — a rule shaped the curated pair's text (the target-only swap, a repair, a name
  swap; ``source_text`` when the source sentences were taken as they are);
* ``dimension`` — the stereotype dimension of a kept instance (``action`` = the label).

:class:`ItemRecord` collects them with the suggested instances, so the reliability of each rule
can be graded against a person's decision (:mod:`stereoset_eval.curation.reliability`), the item
routed to automatic or review, and the suggestion shown in review with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.foundation.items import Item

COMPONENTS: tuple[str, ...] = ("item", "instance", "text", "dimension")
@lru_cache(maxsize=None)
def _source_datasets() -> dict[str, str]:
    from stereoset_eval.curation.gold_eval import DATASET_SOURCE

    return {src: ds for ds, src in DATASET_SOURCE.items()}


def dataset_of(source: str) -> str:
    """The curation-gold schema's dataset name of an item source (the schema's own table, inverted once)."""
    return _source_datasets().get(source, source)


@dataclass(frozen=True)
class Decided:
    """One decision on one source item: which rule, about what, doing what."""

    rule: str
    component: str
    slot: str
    action: str

    @property
    def key(self) -> str:
        """The reliability key: the rule, and for a dimension tag the label it gave (per-class precision)."""
        return f"{self.rule}[{self.action}]" if self.component == "dimension" else self.rule

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "component": self.component, "slot": self.slot, "action": self.action}


@dataclass
class ItemRecord:
    """Every decision proposed for one source item, and the instances it would produce."""

    source_id: str
    dataset: str
    decided: tuple[Decided, ...]
    kept: dict[str, Item] = field(default_factory=dict)       # slot -> the suggested curated instance
    candidates: dict[str, Item] = field(default_factory=dict)  # slot -> every built instance (kept or dropped)
    reasons: dict[str, str] = field(default_factory=dict)      # slot ("" = item) -> the deciding rule's reason
    pair: Item | None = None

    @property
    def holds(self) -> list[Decided]:
        return [d for d in self.decided if d.action == "hold"]

    @property
    def suggestion(self) -> str:
        """``remove`` / ``keep`` / ``undecided`` (a rule holds)."""
        if self.holds:
            return "undecided"
        return "keep" if self.kept else "remove"


def _slot(item_id: str, source_id: str) -> str:
    return item_id.rsplit("#", 1)[1] if "#" in item_id else "as_is"


def _validity_rule(inst: Item) -> str | None:
    for f in inst.flags:
        if f.rule == "stereotype_validity":
            decider = f.evidence.get("decider")
            if decider and not str(decider).startswith("evidence"):
                return f"judge:{decider}"
            return str(f.evidence.get("rule") or "stereotype_validity")
    return None


def text_rules(inst: Item, *, attribute_instance: bool) -> list[str]:
    """The rules that shaped ``inst``'s text; ``source_text`` when no repair touched the source wording."""
    from stereoset_eval.curation.rules.stage_rules import REPAIR_RULE

    out: list[str] = ["target_swap"] if attribute_instance else []
    for f in inst.flags:
        if f.rule == "repair":
            out += [REPAIR_RULE.get(str(r.get("kind")), "repair_spelling") for r in f.evidence.get("repairs", [])]
        elif f.rule in ("name_swap", "swap_completion", "incomplete_swap_repaired", "real_word_typo"):
            out.append(f.rule)
    if not any(r.startswith("repair_") or r == "real_word_typo" for r in out):
        out.append("source_text")  # nothing repaired the source wording: that it needs no fix is a judgement
    return list(dict.fromkeys(out))


def dimension_rule(inst: Item) -> tuple[str, str]:
    """(rule, label) of ``inst``'s dimension tag; ``dimension_none`` (label ``needs annotation``) when no cue was found."""
    from stereoset_eval.curation.dimensions import tag_of
    from stereoset_eval.curation.rules.stage_rules import DIMENSION_RULE

    tag = tag_of(inst)
    if tag is None or tag.label is None:
        return "dimension_none", "needs annotation"
    if tag.source == "human":
        return "review", tag.label
    wheres = [str(h.get("where", "")) for h in tag.evidence]
    if "judge" in wheres:
        return f"judge:{next(h['decider'] for h in tag.evidence if h.get('where') == 'judge')}", tag.label
    where = "frame" if "frame" in wheres else (wheres[0] if wheres else "sentence")
    return DIMENSION_RULE.get(where, "dimension_sentence_cue"), tag.label


def build_records(decisions: Sequence[Any], curated: Iterable[Item], pairs: Mapping[str, Item]) -> list[ItemRecord]:
    """One :class:`ItemRecord` per source pair from the pipeline's decisions and the tagged instances."""
    final = {it.id: it for it in curated}
    by_source: dict[str, list[Any]] = {}
    for d in decisions:
        by_source.setdefault(d.source_id, []).append(d)
    out = []
    for source_id, ds in by_source.items():
        pair = pairs.get(source_id)
        dataset = dataset_of(source_id.split("/", 1)[0])
        decided: list[Decided] = []
        rec = ItemRecord(source_id, dataset, (), pair=pair)
        for d in ds:
            pair_level = d.item_id == source_id
            slot = "" if pair_level and d.status != "kept" else _slot(d.item_id, source_id)
            if d.instance is not None and (d.status != "kept" or d.item_id not in final):
                rec.candidates[slot or "as_is"] = d.instance
            if d.status == "removed":
                decided.append(Decided(d.rule or "unknown", "item" if pair_level else "instance", slot,
                                       "remove" if pair_level else "drop"))
                rec.reasons[slot] = d.reason
                continue
            if d.status == "review":
                decided.append(Decided(d.rule or "unknown", "item" if pair_level else "instance", slot, "hold"))
                rec.reasons[slot] = d.reason
                continue
            inst = final.get(d.item_id)
            if inst is None:
                continue
            rec.kept[slot] = inst
            rec.candidates[slot] = inst
            rec.reasons[slot] = d.reason
            attribute_instance = "#" in d.item_id
            rule = _validity_rule(inst) if attribute_instance else None
            if rule is None:
                rule = "as_is_pair" if not attribute_instance else "keep_unjudged"
            swapped = any(f.rule == "wrong_direction" for f in inst.flags)
            decided.append(Decided(rule, "instance", slot, "swap" if swapped else "keep"))
            decided += [Decided(r, "text", slot, "edit") for r in text_rules(inst, attribute_instance=attribute_instance)]
            drule, label = dimension_rule(inst)
            decided.append(Decided(drule, "dimension", slot, label))
        rec.decided = tuple(decided)
        out.append(rec)
    return out
