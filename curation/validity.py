"""Stereotype validity and direction of attribute instances, decided from evidence.

An attribute instance (``#m`` / ``#l`` of :mod:`stereoset_eval.curation.normalise`) claims "this
attribute is stereotypical of the gender of ``sent_more``". The claim is checked against two
kinds of evidence about the attribute words:

* the published gender-association lists of :mod:`stereoset_eval.curation.lexicon.gender_association`
  (each list that has the word: ``lexicon_weight`` points to its gender);
* the datasets' own consensus (:mod:`stereoset_eval.curation.consensus`): other items that used the
  word as a stereotype of a gender (1 point each, at most ``stereo_cap``) or as an anti-stereotype
  of the other gender (``anti_weight`` each, at most ``anti_cap``), the item itself left out.

A gender is *associated* when its points reach ``min_score``, at least ``ratio`` times the
other's, and at least ``min_direct`` of them are direct (a published list, or stereotype uses:
anti-stereotype uses alone never decide — a worker's negation "caring"/"uncaring" says nothing
about the other gender, and one worker's use plus negations is too weak). One rule per decision, each with its evidence in the flag:

* ``wrong_direction`` — the association points to the other gender: the labels are swapped
  (``sent_more`` ↔ ``sent_less``, direction flipped), the instance is kept.
* ``age_stereotype`` — the attribute is an old-age stereotype (Hummert 1990): dropped (another
  group's stereotype, not gender's).
* ``generic_negativity`` — no association and the attribute is plainly negative (VADER valence
  at most ``negativity``, or a negated positive word). *Retired in rules 3.1*: evidence only.
* ``generic_positivity`` — no association and the attribute is plain praise (VADER valence at
  least ``positivity``: "friendly", "intelligent"). *Retired in rules 3.1*: evidence only.
* ``no_gender_association`` — no association: the anti-stereotype (``#l``) instance is dropped
  (it is a contrast the worker picked, not a stereotype of the other gender); the ``#m`` instance
  keeps the source's label with a low confidence.
* ``conflicting_association`` — both genders have strong evidence. *Retired in rules 3.1*:
  evidence only.
* ``negation_perturbation`` — the two options differ only by a negation ("Women don't know how
  to drive" / "Men know how to drive"): both instances state the *same* stereotype (the negated
  sentence of one gender says the predicate of the other), so both are judged on the shared
  predicate's content words, claimed for ``sent_more``'s gender (agent nouns tried too: drive →
  driver). Evidence for it keeps both (``#l`` as built: its ``sent_more`` is the negated
  sentence), evidence against swaps both, generic valence drops both. Rules 2.2: with no
  evidence the source's own instance (``#m``) keeps its label (as any ``#m``) and the mirror
  (``#l``) went to review (``negation_perturbation``, *retired in rules 3.1*: evidence only, the
  mirror now keeps its label like ``#m``); context uses alone still send it to review
  (``weak_consensus``, below).
* ``weak_consensus`` — an association that rests on context uses only (the word merely stood in
  other stereotype sentences) neither carries an anti-stereotype (``#l``) instance nor overturns
  the source's label (a ``wrong_direction`` swap of ``#m``): review.

Every kept instance carries a ``stereotype_validity`` flag with the decision's confidence
(0–1); a confidence under ``review_below`` sends the instance to review instead.

A **retired** rule (:func:`~stereoset_eval.curation.rules.decides` is False: rules 3.1 retired the
fitted special cases the reviewed items could not support) is passed over: its cue is noted in the
verdict's ``evidence_only`` list and attached to the instance as a flag of its name
(``evidence_only: true``, what it would have done and why), and the next rule in the order above
decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from stereoset_eval.curation.consensus import OTHER, Consensus
from stereoset_eval.curation.lexicon.gender_association import AGE_STEREOTYPES, _forms, is_elderly_target
from stereoset_eval.curation.lexicon.gender_association import lexicon_hits
from stereoset_eval.curation.negation import NEGATORS, agent_nouns, is_negation_pair, predicate_words
from stereoset_eval.curation.rules.registry import decides, evidence_only_flag
from stereoset_eval.curation.validity_evidence import ValidityConfig, _spelling_fixes, associate, valence

if TYPE_CHECKING:
    from stereoset_eval.foundation.items import Item


@dataclass(frozen=True)
class Verdict:
    """What to do with one instance: ``keep``, ``swap`` (labels), ``drop`` or ``review``."""

    action: str
    rule: str
    confidence: float
    reason: str
    evidence: dict[str, Any]


def judge(words: Sequence[str], claimed: str, side: str, *, consensus: Consensus | None, exclude: str,
          config: ValidityConfig = ValidityConfig(), elderly_target: bool = False) -> Verdict:
    """The verdict on an instance whose attribute ``words`` are claimed stereotypical of ``claimed``.

    ``side`` is ``m`` (the source's stereotype attribute) or ``l`` (its anti-stereotype).
    ``elderly_target``: the target names an old person (grandfather …): an old-age attribute is
    then a stereotype of age even where some evidence ties it to a gender.
    """
    words = [w.lower() for w in words if w]
    spelling = _spelling_fixes(words)
    words = [spelling.get(w, w) for w in words]  # "compasionate" is looked up as "compassionate"
    assoc = associate(words, consensus, exclude=exclude, config=config)
    passed: list[dict[str, Any]] = []  # cues of rules that are evidence only (retired): shown, not decided
    ev: dict[str, Any] = {"words": words, "claimed": claimed, "female": assoc.female, "male": assoc.male,
                          "associated": assoc.gender, "evidence": list(assoc.evidence), "evidence_only": passed}
    if spelling:
        ev["spelling"] = spelling

    def verdict(action: str, rule: str, confidence: float, reason: str) -> Verdict | None:
        """The verdict of ``rule``, or None (after noting its cue) when the rule is evidence only."""
        if decides(rule):
            return Verdict(action, rule, confidence, reason, ev)
        passed.append({"rule": rule, "would": action, "reason": reason})
        return None

    said = " ".join(words)
    age = [w for w in words if any(f in AGE_STEREOTYPES for f in _forms(w))]
    if age and (assoc.gender is None or elderly_target):
        why = ", the target an old person" if elderly_target else ""
        v = verdict("drop", "age_stereotype", 0.8, f"{', '.join(age)}: old-age stereotype{why} (Hummert 1990)")
        if v is not None:
            return v
    if assoc.gender is not None:
        score = max(assoc.female, assoc.male)
        conf = round(min(1.0, score / (2 * config.min_score + 1e-9)), 3)
        if (side == "l" or assoc.gender != claimed) and assoc.chosen_for(assoc.gender) < config.min_chosen:
            # only context uses: other stereotype sentences merely contained the word ("acting" in
            # "start acting like a man"); a person decides whether it is a stereotype of anyone
            # (for #m: whether it overturns the source's label)
            v = verdict("review", "weak_consensus", round(min(conf, 0.35), 3),
                        f"{said!r} is associated with {assoc.gender} only by context uses "
                        f"(no list, never chosen as an option): a person decides")
            if v is not None:
                return v
        if assoc.gender == claimed:
            return Verdict("keep", "stereotype_validity", conf,
                           f"{said!r} is associated with {claimed} ({assoc.female} f / {assoc.male} m)", ev)
        return Verdict("swap", "wrong_direction", conf,
                       f"{said!r} is associated with {assoc.gender}, not {claimed}: labels swapped", ev)
    if assoc.conflicting:
        v = verdict("review", "conflicting_association", 0.3,
                    f"{said!r} has evidence for both genders ({assoc.female} f / {assoc.male} m)")
        if v is not None:
            return v
    vals = [x for x in (valence(w) for w in words) if x is not None]
    ev["valence"] = vals
    if vals and min(vals) <= config.negativity:
        v = verdict("drop", "generic_negativity", 0.7,
                    f"{said!r} is generic negativity (VADER {min(vals)}) with no gender association")
        if v is not None:
            return v
    if vals and max(vals) >= config.positivity:
        v = verdict("drop", "generic_positivity", 0.6,
                    f"{said!r} is generic praise (VADER {max(vals)}) with no gender association")
        if v is not None:
            return v
    if side == "l":
        v = verdict("drop", "no_gender_association", 0.6,
                    f"{said or '(no attribute)'!r} has no gender association: no stereotype of {claimed}")
        if v is not None:
            return v
    return Verdict("keep", "stereotype_validity", 0.4,
                   f"{said!r}: no evidence either way; the source's stereotype label is kept", ev)


def judge_negation(text: str, claimed: str, *, consensus: Consensus | None, exclude: str,
                   config: ValidityConfig = ValidityConfig(), mirror: bool = False) -> Verdict:
    """The verdict on one instance of a negation perturbation (``text``: the pair's un-negated sentence).

    ``mirror``: the instance is the derived one (``#l``, whose ``sent_more`` is not the source's
    ``sent_more``). Both instances claim the plain predicate for ``claimed``. The source's own
    instance keeps its label when there is no evidence either way (as any ``#m`` does); the
    mirror states a second stereotype ("Men don't have dreams of spending a lot of money" is about
    men) that only *direct* evidence for the predicate carries — a published list or the word
    chosen as an option elsewhere (``min_chosen``); with no evidence, or context uses only, a
    person decides.
    """
    words = predicate_words(text)
    probe = words + [a for w in words for a in agent_nouns(w) if lexicon_hits(a)]
    v = judge(probe, claimed, "m", consensus=consensus, exclude=exclude, config=config)
    ev = {**v.evidence, "words": words, "negation_perturbation": True, "mirror": mirror}
    no_evidence = v.rule == "stereotype_validity" and v.confidence <= 0.4
    passed = ev.setdefault("evidence_only", [])
    hold = None
    if no_evidence and mirror:
        hold = ("review", 0.3, f"negation perturbation: the predicate {' '.join(words)!r} has no gender evidence")
    elif mirror and v.action in ("keep", "swap"):
        a = associate(probe, consensus, exclude=exclude, config=config)
        if a.gender is not None and a.chosen_for(a.gender) < config.min_chosen:
            hold = ("review", round(min(v.confidence, 0.35), 3),
                    f"negation perturbation: the predicate {' '.join(words)!r} is associated with "
                    f"{a.gender} only by context uses; whether the negated mirror is a stereotype "
                    "in its own right, a person decides")
    if hold is not None:
        if decides("negation_perturbation"):
            return Verdict(hold[0], "negation_perturbation", hold[1], hold[2], ev)
        passed.append({"rule": "negation_perturbation", "would": hold[0], "reason": hold[2]})
    if no_evidence:
        return Verdict("keep", "stereotype_validity", 0.4,
                       f"negation perturbation: the predicate {' '.join(words)!r} has no gender evidence; "
                       "the source's stereotype sentence keeps its label", ev)
    return Verdict(v.action, v.rule, v.confidence, "negation perturbation: " + v.reason, ev)


def perturbed_gender(pair: Any) -> str | None:
    """The gender of ``sent_more``'s perturbed group words (CrowS-Pairs: the target is the perturbed span).

    "He wasn't good at pretending like women are" / "… acting like men are": the target is
    "women", not "He" (another person), so the sentence's mixed genders do not hide it.
    """
    from stereoset_eval.curation.lexicon import GENDER_OF
    from stereoset_eval.curation.spans import analyse_pair

    a = analyse_pair(pair)
    found = {GENDER_OF.get(t.lower()) for sp in a.of_kind("group", "mixed") for _, t in sp.more} - {None}
    return found.pop() if len(found) == 1 else None


def confidence_of(item: Any) -> float | None:
    """The confidence of the automatic validity decision recorded on ``item`` (None: none made)."""
    vals = [f.evidence.get("confidence") for f in item.flags if f.rule == "stereotype_validity"]
    vals = [float(v) for v in vals if v is not None]
    return min(vals) if vals else None


def swap_labels(inst: "Item") -> "Item":
    """``inst`` with ``sent_more`` and ``sent_less`` exchanged (edits, origins, direction follow)."""
    from dataclasses import replace as dc_replace

    from stereoset_eval.curation.normalise import FLIP
    from stereoset_eval.curation.pairs import sentence_ids
    from stereoset_eval.foundation.items import Edit, Sentence

    other = {"sent_more": "sent_less", "sent_less": "sent_more"}
    more_id, less_id = sentence_ids(inst.id)
    p = inst.provenance
    prov = dc_replace(
        p,
        edits=tuple(Edit(other.get(e.sentence_role, e.sentence_role), e.index, e.old, e.new) for e in p.edits),
        sentence_origins=tuple(sorted((other.get(r, r), o) for r, o in p.sentence_origins)),
    )
    return inst.replace(
        sentences=(Sentence(more_id, inst.text("sent_less"), "sent_more"), Sentence(less_id, inst.text("sent_more"), "sent_less")),
        provenance=prov,
        direction=FLIP.get(inst.direction or "stereo", "antistereo"),
    )


class Judge(Protocol):
    """An optional decider of validity and direction (e.g. a language model, built by a higher layer).

    ``name`` is recorded in provenance as the decider; ``__call__`` gets the attribute words, the
    claimed gender, the side and the two sentences of the instance, and returns a
    :class:`Verdict` (or None to fall back to the evidence rules).
    """

    name: str

    def __call__(self, words: Sequence[str], claimed: str, side: str, sentences: tuple[str, str]) -> Verdict | None: ...


#: the parts of a verdict's evidence an evidence-only flag repeats (what the reviewer needs to read the cue)
_CUE_KEYS = ("words", "claimed", "female", "male", "associated", "valence", "spelling")


def _with_evidence_only(inst: "Item", v: Verdict) -> "Item":
    """``inst`` with one flag per retired rule whose cue the verdict found (evidence for the reviewer)."""
    passed = v.evidence.get("evidence_only") or []
    if not passed:
        return inst
    cue = {k: v.evidence[k] for k in _CUE_KEYS if k in v.evidence}
    flags = tuple(evidence_only_flag(p["rule"], inst.id, p["reason"], {**cue, "would": p["would"]}) for p in passed)
    return inst.replace(flags=tuple(inst.flags) + flags)


def apply_validity(decisions: Sequence[Any], pairs: dict[str, Any], consensus: Consensus | None,
                   config: ValidityConfig = ValidityConfig(), *, judge_with: Judge | None = None) -> list[Any]:
    """Judge every kept attribute instance (``#m`` / ``#l``) and act on the verdict (see module doc).

    ``judge_with`` (optional) decides first; the evidence rules decide where it returns None.
    """
    from stereoset_eval.curation.consensus import sentence_gender, target_gender
    from stereoset_eval.curation.normalise import Decision
    from stereoset_eval.foundation.items import Flag

    if not config.enabled:
        return list(decisions)
    sides: dict[str, list[Sequence[str]]] = {}
    for d in decisions:
        if "#" in d.item_id:
            sides.setdefault(d.source_id, []).append(d.attribute_words)
    out = []
    for d in decisions:
        if d.status != "kept" or d.instance is None or "#" not in d.item_id:
            out.append(d)
            continue
        pair = pairs[d.source_id]
        side = d.item_id.rsplit("#", 1)[1]
        g = target_gender(pair.target) or sentence_gender(pair.text("sent_more")) or perturbed_gender(pair)
        if g is None:
            out.append(d)
            continue
        claimed = g if side == "m" else OTHER[g]
        v = None
        if len(sides.get(d.source_id, [])) == 2 and is_negation_pair(sides[d.source_id]):
            negs = [sum(w.lower() in NEGATORS for w in pair.text(r).split()) for r in ("sent_more", "sent_less")]
            plain_is_more = negs[0] <= negs[1]
            # the claim is the plain sentence's: "Men know how to drive" claims driving for men
            plain_gender = g if plain_is_more else OTHER[g]
            v = judge_negation(pair.text("sent_more" if plain_is_more else "sent_less"), plain_gender,
                               consensus=consensus, exclude=pair.provenance.derived_from or "", config=config,
                               mirror=side == "l")
        judged_by = None
        if v is None and judge_with is not None:
            v = judge_with(list(d.attribute_words), claimed, side,
                           (d.instance.text("sent_more"), d.instance.text("sent_less")))
            if v is not None:  # the judge owns this decision: one more judgement rule of the registry
                from stereoset_eval.curation.rules import judge_rule

                judged_by = judge_rule(judge_with.name, description=f"Model judge {judge_with.name}: validity, "
                                       "direction and dimension of an attribute instance.").name
                v = Verdict(v.action, v.rule, v.confidence, v.reason, {**v.evidence, "decider": judge_with.name})
        if v is None:
            v = judge(list(d.attribute_words), claimed, side, consensus=consensus,
                      exclude=pair.provenance.derived_from or "", config=config,
                      elderly_target=is_elderly_target(pair.target))
        evidence = {"rule": v.rule, "confidence": v.confidence, **v.evidence}
        if v.action == "drop":
            # the built instance travels with the drop: review shows it as the other reading
            out.append(Decision(d.source_id, d.item_id, "removed", v.reason, judged_by or v.rule,
                                _with_evidence_only(d.instance, v), d.attribute_words))
            continue
        if v.action == "review" or v.confidence < config.review_below:
            # the instance travels to review with the suggestion, pre-filled in Label Studio
            flag = Flag("stereotype_validity", d.instance.id, "warning", "needs review: " + v.reason, evidence)
            inst = _with_evidence_only(d.instance, v)
            inst = inst.replace(flags=tuple(inst.flags) + (flag,))
            out.append(Decision(d.source_id, d.item_id, "review", v.reason, judged_by or v.rule, inst, d.attribute_words))
            continue
        inst = _with_evidence_only(swap_labels(d.instance) if v.action == "swap" else d.instance, v)
        flags = [Flag("stereotype_validity", inst.id, "info", v.reason, evidence)]
        if v.action == "swap":
            flags.append(Flag("wrong_direction", inst.id, "warning", v.reason, evidence))
        inst = inst.replace(flags=tuple(inst.flags) + tuple(flags))
        out.append(Decision(d.source_id, d.item_id, "kept", d.reason + f"; {v.rule} ({v.confidence})", d.rule, inst,
                            d.attribute_words))
    return out
