"""Gender-swap normalisation of harmonised pairs (BMNE paper §3.3).

Every harmonised pair gets :class:`Decision` records; nothing is dropped silently:

* **removed** — the pair (or one side of it) cannot become a gender minimal pair: a known
  erratum, identical sentences, no gender term, options that differ by a gender term, a
  perturbation that is another group's marker or a group term on one side only.
* **kept, as is** — the pair already differs only by gendered words or names (one
  consistent swap): one instance, no edits. Rules 2.2: a CrowS-Pairs pair that also differs by a
  real-word typo ("Jim to Drew" / "Susan told Drew", :mod:`stereoset_eval.curation.real_word_typo`)
  is repaired (one recorded edit, flag ``real_word_typo``) and kept as is, or sent to review
  when the intended spelling cannot be decided mechanically.
* **kept, augmented** — the attribute was perturbed (``attribute_perturbation``): one
  gender-swapped instance per attribute. With ``G`` the gender of ``sent_more`` and ``A_s``
  / ``A_a`` the attributes of ``sent_more`` / ``sent_less``:

  - instance ``#m``: ``sent_more`` = the original ``sent_more`` (G, A_s), ``sent_less`` = its
    swap (G', A_s); direction unchanged.
  - instance ``#l``: the sentence with A_a that fits the stereotype becomes ``sent_more``:
    if ``sent_less`` has the same gender as ``sent_more`` (only the attribute differs, as in
    every StereoSet item) it is anti-stereotypical and its *swap* (G', A_a) is ``sent_more``;
    if its gender differs (CrowS "Women don't know how to drive" / "Men know how to drive")
    the original ``sent_less`` (G', A_a) is ``sent_more`` and its swap ``sent_less``.
    ``sent_more`` is then about the other gender, so the CrowS-Pairs direction flips
    (``stereo`` ↔ ``antistereo``; see :data:`FLIP`).

* **review** — an instance the rules cannot finish: the swap changed nothing (the only
  gender marker is a given name, which is never swapped), the swapped sentence keeps a
  gendered name (its pronouns were swapped, the name was not: "Anna's father was proud of
  him"), or (decided after the rules run on the instances, in :mod:`stereoset_eval.curation.pipeline`) an
  edited sentence is gender-inconsistent. Rules 3.1 retired ``name_conflict`` and
  ``ambiguous_name_swap`` (and ``inconsistent_gender``'s hold of a source pair): their findings are
  attached to the kept as-is pair as evidence-only flags, they hold nothing.

These statuses are the rules' *suggestions*: whether an item is decided automatically or goes to
a person is decided afterwards, from the measured reliability of every rule on it
(:mod:`stereoset_eval.curation.reliability`). The name policies live in
:mod:`stereoset_eval.curation.name_policy`, the as-is repairs in :mod:`stereoset_eval.curation.as_is_repair`.

StereoSet options are attributes by construction (the target stays), so a side whose
option is a gender term or another group's marker is removed on its own and the other side
is still normalised ("loving"/"male": the "loving" instance is kept). For CrowS-Pairs such
a pair is removed whole: its group perturbation itself is broken ("House burglars"/"Women").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stereoset_eval.curation.gender_swap import swap_flags, swap_gender
from stereoset_eval.curation.text import tokenize
from stereoset_eval.foundation.items import Flag, Item, Provenance, Sentence
from stereoset_eval.curation.pairs import INSTANCE_SEPARATOR, rehome_flags, sentence_ids
from stereoset_eval.curation.real_word_typo import TypoFinding, apply_fix, find_real_word_typo
from stereoset_eval.curation.rules import RULES, decides, evidence_only_flag
from stereoset_eval.curation.spans import PairAnalysis, analyse_pair, is_group_term, is_other_group_term, term_info
from stereoset_eval.curation.target_swap import non_target_indices
from stereoset_eval.curation.name_policy import (
    ambiguous_name_swap, name_conflict, name_map_for, other_number_indices, pair_name_map,
)
from stereoset_eval.curation.as_is_repair import extra_words_only

FLIP: dict[str, str] = {"stereo": "antistereo", "antistereo": "stereo"}
STATUSES: tuple[str, ...] = ("kept", "review", "removed")
#: a pair-level effect of a fired runner rule -> the status of the pair's decision
EFFECT_STATUS: dict[str, str] = {"remove": "removed", "hold": "review"}


@dataclass(frozen=True)
class Decision:
    """What happened to one pair or instance, and why (one row of the removed table)."""

    source_id: str
    item_id: str
    status: str
    reason: str
    rule: str | None = None
    instance: Item | None = None
    attribute_words: tuple[str, ...] = field(default=())

    def to_row(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "source_id": self.source_id, "status": self.status,
                "rule": self.rule or "", "reason": self.reason}


def _load_flags(pair: Item, new_id: str) -> tuple:
    """The pair's load-time flags (rule flags are recomputed on the instances)."""
    return rehome_flags(tuple(f for f in pair.flags if not (f.rule in RULES and RULES[f.rule].runs_in_runner)), new_id)


def _side_markers(analysis: PairAnalysis, side: str) -> list[str]:
    """Gender terms or other groups' markers among ``side``'s differing words."""
    tokens = list(analysis.more_tokens if side == "more" else analysis.less_tokens)
    out = []
    for span in analysis.of_kind("group", "mixed", "attribute", "other_group", "mismatch"):
        for i, tok in (span.more if side == "more" else span.less):
            info = term_info(tokens, i)
            if is_group_term(info, analysis.bias_type) or is_other_group_term(info, analysis.bias_type):
                what = info.category or ("gender term" if info.kind == "gender" else "name")
                out.append(f"{tok} ({what})")
    return out


def _instance(pair: Item, suffix: str, more: tuple[str, str], less: tuple[str, str], direction: str | None,
              edits: tuple, extra_flags: list) -> Item:
    """Build an instance; ``more``/``less`` are (text, pair role it was made from)."""
    new_id = f"{pair.id}{INSTANCE_SEPARATOR}{suffix}"
    more_id, less_id = sentence_ids(new_id)
    origins = dict(pair.provenance.sentence_origins)
    p = pair.provenance
    return pair.replace(
        id=new_id,
        sentences=(Sentence(more_id, more[0], "sent_more"), Sentence(less_id, less[0], "sent_less")),
        direction=direction,
        provenance=Provenance(
            source_file=p.source_file, sha256=p.sha256, row=p.row, format=p.format,
            format_version=p.format_version, derived_from=p.derived_from, edits=tuple(edits),
            sentence_origins=(("sent_more", origins.get(more[1], more[1])), ("sent_less", origins.get(less[1], less[1]))),
        ),
        flags=_load_flags(pair, new_id) + tuple(extra_flags),
    )


def _augment(pair: Item, analysis: PairAnalysis, side: str, *, partners: str = "swap",
             as_is: bool = False) -> Decision:
    """The gender-swapped instance for the attribute of ``side`` (``more`` or ``less``).

    Only the target and the words referring to it are swapped
    (:func:`stereoset_eval.curation.target_swap.non_target_indices`; ``partners`` is its policy).
    """
    role = "sent_more" if side == "more" else "sent_less"
    text = pair.text(role)
    suffix = "m" if side == "more" else "l"
    inst_id = pair.id if as_is else f"{pair.id}{INSTANCE_SEPARATOR}{suffix}"
    genders_differ = bool(analysis.of_kind("group", "mixed"))
    swap_into = "sent_more" if (side == "less" and not genders_differ) else "sent_less"
    protect = analysis.attribute_indices(side) | non_target_indices(text, pair.target, partners=partners)
    if pair.target is None:
        protect = protect | other_number_indices(text, analysis, side)
    if as_is:  # only the perturbed span is the target: everything outside it stays
        spans = {i for sp in analysis.spans for i, _ in (sp.more if side == "more" else sp.less)}
        protect = frozenset(i for i in range(len(tokenize(text))) if i not in spans)
    from stereoset_eval.curation.consensus import target_gender

    tg = (target_gender(pair.target) or "unknown") if pair.target else None  # CrowS-Pairs: the span is the target
    name_map, name_evidence = name_map_for(text, pair_name_map(analysis), target_gender=tg)
    r = swap_gender(text, role=swap_into, protect=protect, names=name_map)
    attr = tuple(analysis.attribute_words(side))
    if not r.changed:
        names = ", ".join(n for _, n, _ in r.names_left)
        # nothing was swapped: no pair can be built (mechanical); the names left alone are the reason
        return Decision(pair.id, inst_id, "review",
                        f"no swappable gender term outside the attribute in {role}"
                        + (f" (given names are not swapped: {names})" if names else ""),
                        "name_left_alone" if names and decides("name_left_alone") else "attribute_perturbation",
                        attribute_words=attr)
    # a possessor's name is someone else and stays by design ("Judy's male friend" / "Judy's female friend")
    gendered_names = [f"{n} ({g})" for _, n, g in r.names_left if g and not (pair.target and n.endswith("'s"))]
    left_alone = None
    if gendered_names:
        why = (f"given name(s) {', '.join(gendered_names)} left alone in the swapped {role}; "
               "pronouns that refer to them would now disagree")
        if decides("name_left_alone"):
            return Decision(pair.id, inst_id, "review", why, "name_left_alone", attribute_words=attr)
        left_alone = evidence_only_flag("name_left_alone", inst_id, why, {"role": swap_into, "names": gendered_names})
    kept, swapped = (text, role), (r.text, role)
    more, less = (swapped, kept) if swap_into == "sent_more" else (kept, swapped)
    direction = pair.direction if side == "more" else FLIP.get(pair.direction or "stereo", "antistereo")
    flags = swap_flags(inst_id, r, swap_into)
    if left_alone is not None:
        flags.append(left_alone)
    if name_evidence:
        flags.append(Flag("name_swap", inst_id, "info",
                          "given name(s) swapped: " + ", ".join(f"{e['name']}->{e['counterpart']}" for e in name_evidence),
                          {"role": swap_into, "names": name_evidence}))
    inst = _instance(pair, suffix, more, less, direction, r.edits, flags)
    if as_is:
        inst = _as_is_instance(pair, inst)
        return Decision(pair.id, pair.id, "kept",
                        f"as-is pair repaired: sent_less differed also by {' '.join(analysis.attribute_words('less')) or '-'!r};"
                        " rebuilt as the target-only swap of sent_more", "incomplete_swap_repaired", inst)
    how = "swap of the original sentence" if swap_into == "sent_less" else "swap of sent_less, now sent_more"
    return Decision(pair.id, inst_id, "kept", f"augmented: attribute {' '.join(attr) or '(none)'!r}; {how}",
                    "attribute_perturbation", inst, attr)


def _fix_real_word_typo(pair: Item, typo: TypoFinding) -> Item:
    """``pair`` with its real-word typo repaired in one sentence, the edit recorded and flagged."""
    from dataclasses import replace as dc_replace

    from stereoset_eval.foundation.items import Edit

    fix = typo.fix
    if fix is None:
        raise ValueError(f"{pair.id}: no fix to apply")
    sentences = tuple(Sentence(s.id, apply_fix(s.text, fix) if s.role == fix.role else s.text, s.role)
                      for s in pair.sentences)
    flag = Flag("real_word_typo", pair.id, "info",
                f"real-word typo repaired ({fix.kind}): {fix.role} {fix.old!r} -> {fix.new!r}", typo.evidence())
    prov = dc_replace(pair.provenance, edits=tuple(pair.provenance.edits) + (Edit(fix.role, fix.index, fix.old, fix.new),))
    return pair.replace(sentences=sentences, provenance=prov, flags=tuple(pair.flags) + (flag,))


def _as_is_instance(pair: Item, inst: Item) -> Item:
    """``inst`` (built as ``#m``) re-identified as the pair's single as-is instance."""
    from dataclasses import replace as dc_replace

    more_id, less_id = sentence_ids(pair.id)
    flag = Flag("incomplete_swap_repaired", pair.id, "info",
                f"sent_less rebuilt as the swap of sent_more (was: {pair.text('sent_less')!r})",
                {"original_sent_less": pair.text("sent_less")})
    return inst.replace(
        id=pair.id,
        sentences=(Sentence(more_id, inst.text("sent_more"), "sent_more"), Sentence(less_id, inst.text("sent_less"), "sent_less")),
        provenance=dc_replace(inst.provenance, sentence_origins=(("sent_more", "sent_more"), ("sent_less", "sent_more"))),
        flags=tuple(rehome_flags(tuple(inst.flags), pair.id)) + (flag,),
    )


def normalise_pair(pair: Item, analysis: PairAnalysis, *, partners: str = "swap") -> list[Decision]:
    """Decisions for one harmonised pair whose flags come from :func:`stereoset_eval.curation.rules.run_rules`.

    ``partners``: the target-only swap's policy for the target's partner (``swap`` or ``keep``).
    """
    fired = {f.rule: f for f in pair.flags if f.rule in RULES and RULES[f.rule].runs_in_runner}
    stereoset_like = pair.target is not None
    # the rules' declared pair effects, applied generically: the first by precedence (Rule.order) decides
    deciding = sorted((RULES[name] for name in fired if RULES[name].effect in EFFECT_STATUS
                       and RULES[name].applies_to(pair)), key=lambda r: (r.order, r.name))
    if deciding:
        r = deciding[0]
        return [Decision(pair.id, pair.id, EFFECT_STATUS[r.effect], fired[r.name].message, r.name)]
    if not stereoset_like:
        typo = find_real_word_typo(analysis)
        if typo is not None and typo.fix is None:
            why = (f"the pair swaps gender and otherwise differs by {typo.more_word!r} / {typo.less_word!r}, "
                   "a near edit of two dictionary words (a typo or an attribute?): a person decides")
            # the pair travels to review with both readings (review_items.jsonl, Label Studio)
            flag = Flag("real_word_typo", pair.id, "warning", "needs review: " + why, typo.evidence())
            inst = pair.replace(flags=_load_flags(pair, pair.id) + (flag,))
            return [Decision(pair.id, pair.id, "review", why, "real_word_typo", inst)]
        if typo is not None and typo.fix is not None:
            fixed = _fix_real_word_typo(pair, typo)
            return normalise_pair(fixed, analyse_pair(fixed), partners=partners)
    if not stereoset_like and extra_words_only(analysis):
        d = _augment(pair, analysis, "more", partners=partners, as_is=True)
        if d.status == "kept":
            return [d]
    if analysis.is_pure_group_swap:
        cues = []  # name policies that are evidence only (retired): shown to the reviewer, not decided
        for rule_name, check, what in (("name_conflict", name_conflict, "a name contradicts the swap: "),
                                       ("ambiguous_name_swap", ambiguous_name_swap, "no clear gender swap: ")):
            found = None if stereoset_like else check(analysis)
            if not found:
                continue
            if decides(rule_name):
                return [Decision(pair.id, pair.id, "review", what + found, rule_name)]
            cues.append(evidence_only_flag(rule_name, pair.id, what + found))
        inst = pair.replace(flags=_load_flags(pair, pair.id) + tuple(cues))
        return [Decision(pair.id, pair.id, "kept", "already a gender minimal pair", None, inst)]
    out = []
    for side in ("more", "less"):
        markers = _side_markers(analysis, side) if stereoset_like else []
        if markers:
            suffix = "m" if side == "more" else "l"
            rule_name = "other_group_marker" if "other_group_marker" in fired else "mismatched_group_category"
            out.append(Decision(pair.id, f"{pair.id}{INSTANCE_SEPARATOR}{suffix}", "removed",
                                f"the {'stereotype' if side == 'more' else 'anti-stereotype'} option is a group "
                                f"marker: {', '.join(markers)}", rule_name))
            continue
        out.append(_augment(pair, analysis, side, partners=partners))
    return out
