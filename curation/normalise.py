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
  edited sentence is gender-inconsistent.

StereoSet options are attributes by construction (the target stays), so a side whose
option is a gender term or another group's marker is removed on its own and the other side
is still normalised ("loving"/"male": the "loving" instance is kept). For CrowS-Pairs such
a pair is removed whole: its group perturbation itself is broken ("House burglars"/"Women").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stereoset_eval.curation.gender_swap import swap_flags, swap_gender
from stereoset_eval.curation.lexicon import function_words as fw
from stereoset_eval.curation.lexicon import name_counterparts, name_gender
from stereoset_eval.curation.lexicon import GENDER_OF
from stereoset_eval.curation.text import is_word, split_clitic, tokenize
from stereoset_eval.foundation.items import Flag, Item, Provenance, Sentence
from stereoset_eval.curation.pairs import INSTANCE_SEPARATOR, rehome_flags, sentence_ids
from stereoset_eval.curation.real_word_typo import TypoFinding, apply_fix, find_real_word_typo
from stereoset_eval.curation.rules import RULES
from stereoset_eval.curation.spans import PairAnalysis, analyse_pair, is_group_term, is_other_group_term, term_info
from stereoset_eval.curation.target_swap import non_target_indices

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


def pair_name_map(analysis: PairAnalysis) -> dict[str, str]:
    """The source pair's own name counterparts: names facing each other in a differing span.

    CrowS-Pairs writers often perturbed the name with the attribute ("Carol was praised …" /
    "Andrew was teased …"); the curated instances swap Carol ↔ Andrew, as the gold does.
    """
    out: dict[str, str] = {}
    for span in analysis.of_kind("group", "mixed", "attribute"):
        m = [(i, t) for i, t in span.more if term_info(list(analysis.more_tokens), i).kind in ("name", "possible_name")]
        le = [(i, t) for i, t in span.less if term_info(list(analysis.less_tokens), i).kind in ("name", "possible_name")]
        if len(m) == 1 and len(le) == 1:
            a, b = m[0][1].removesuffix("'s"), le[0][1].removesuffix("'s")
            ga, gb = name_gender(a)[1], name_gender(b)[1]
            if a.lower() != b.lower() and not (ga and gb and ga == gb):
                out[a.lower()] = b
                out[b.lower()] = a
    return out


def name_map_for(text: str, own: dict[str, str], *, min_confidence: float = name_counterparts.MIN_CONFIDENCE,
                 target_gender: str | None = None) -> tuple[dict[str, str], list[dict[str, object]]]:
    """Name → counterpart for the gendered names of ``text``, with the evidence of each choice.

    The source pair's own counterpart first (``own``); else the lexicon's other-gender,
    same-origin name (:mod:`stereoset_eval.curation.lexicon.name_counterparts`) when its
    confidence reaches ``min_confidence``; else none (the name is held for review).
    """
    from stereoset_eval.curation.repair import is_lowercase_name

    out: dict[str, str] = {}
    evidence: list[dict[str, object]] = []
    tokens = tokenize(text)
    for i, tok in enumerate(tokens):
        base = tok.removesuffix("'s")
        if not is_word(base):
            continue
        is_name, gender = name_gender(base.capitalize() if is_lowercase_name(tokens, i) else base)
        low = base.lower()
        if target_gender is not None and (tok.endswith("'s") or gender != target_gender):
            continue  # StereoSet: a name is swapped only as the target ("Little timmy"), never as a possessor
        if not is_name or low in out:
            continue
        if low in own:
            out[low] = own[low]
            evidence.append({"name": base, "counterpart": own[low], "source": "the source pair", "confidence": 1.0})
            continue
        if gender is None:
            continue
        c = name_counterparts.counterpart(base, gender)
        if c is not None and c.confidence >= min_confidence:
            out[low] = c.counterpart
            evidence.append(c.evidence())
    return out, evidence


# closed-class words a CrowS-Pairs writer added or dropped next to the gender term ("the girls" /
# "the other guys", "his dad" / "both of his moms"): no attribute of their own
EXTRA_WORDS = (fw.DETERMINERS | fw.PREPOSITIONS | fw.PRONOUNS | frozenset(
    "other others one two both couple pair".split()))


def extra_words_only(analysis: PairAnalysis) -> bool:
    """True if the pair swaps gender and otherwise differs only by closed-class words.

    Such a pair is an as-is gender swap written incompletely ("He was better at astronomy than
    the girls / the other guys in his class"): the issue's "incomplete or inconsistent swaps in
    as-is pairs, repaired when mechanical". The repair is the target-only swap of ``sent_more``.
    """
    if not analysis.of_kind("group", "mixed") or analysis.of_kind("other_group", "mismatch"):
        return False
    words = analysis.attribute_words("more") + analysis.attribute_words("less")
    if words:
        return all(w.lower() in EXTRA_WORDS for w in words)
    return bool(relation_mismatch(analysis))


# kin terms by relation: a swap must keep the relation ("Grandpa Silas" / "Aunt Celia" also changes
# the generation, a confound the gold repairs to "Grandma Celia")
RELATION: dict[str, str] = {
    **dict.fromkeys("grandpa grandma grandfather grandmother granddad grandmom granny grandpas grandmas "
                    "grandfathers grandmothers".split(), "grandparent"),
    **dict.fromkeys("grandson granddaughter grandsons granddaughters".split(), "grandchild"),
    **dict.fromkeys("aunt uncle aunts uncles".split(), "aunt/uncle"),
    **dict.fromkeys("niece nephew nieces nephews".split(), "niece/nephew"),
    **dict.fromkeys("mother father mom dad mommy daddy mum mothers fathers moms dads mums".split(), "parent"),
    **dict.fromkeys("son daughter sons daughters".split(), "child"),
    **dict.fromkeys("brother sister brothers sisters".split(), "sibling"),
    **dict.fromkeys("husband wife husbands wives".split(), "spouse"),
}


def relation_mismatch(analysis: PairAnalysis) -> list[tuple[str, str]]:
    """Kin terms facing each other in a group span whose relations differ (grandpa / aunt)."""
    out = []
    for span in analysis.of_kind("group"):
        m = [t.lower() for _, t in span.more if t.lower() in RELATION]
        le = [t.lower() for _, t in span.less if t.lower() in RELATION]
        out += [(a, b) for a, b in zip(m, le) if RELATION[a] != RELATION[b]]
    return out


SINGULAR_PRONOUNS = frozenset("he she him her his hers himself herself".split())


def other_number_indices(text: str, analysis: PairAnalysis, side: str) -> frozenset[int]:
    """Gendered words outside the perturbed span whose number differs from the target's.

    CrowS-Pairs: the perturbed group term is the target. A singular pronoun next to a plural
    target ("He wasn't good at pretending like women are") is another person and stays, and so
    is a plural group next to a singular target. Words of the same number are swapped (they may
    refer to the target: "Women … their").
    """
    tokens = tokenize(text)
    spans = {i for sp in analysis.of_kind("group", "mixed") for i, _ in (sp.more if side == "more" else sp.less)}
    target = [split_clitic(tokens[i])[0].lower() for i in spans if GENDER_OF.get(split_clitic(tokens[i])[0].lower())]
    if not target:
        return frozenset()
    plural_target = all(t not in SINGULAR_PRONOUNS and t.endswith(("men", "s")) for t in target)
    out = set()
    for i, tok in enumerate(tokens):
        low = split_clitic(tok)[0].lower()
        if i in spans or not is_word(tok) or low not in GENDER_OF:
            continue
        singular = low in SINGULAR_PRONOUNS or not low.endswith(("men", "s"))
        if plural_target == singular:
            out.add(i)
    return frozenset(out)


def name_conflict(analysis: PairAnalysis) -> str | None:
    """Why an as-is pair contradicts its own names (None when it does not).

    The swapped words are pronouns, or a singular group noun the person is said to be ("being a
    male"; not relatives, partners or plural groups, who are other people), and every gendered given name left unchanged in the pair is of the other gender than
    the swapped word in one sentence ("Denny took his / her wedding ring off", "Kate's one … for
    being the car of a man / woman"): one side describes the named person with the wrong gender,
    which no mechanical edit repairs (the gold's ``unclear``). Unisex-listed names count with the
    name dictionary's gender when at least 90 % of its frequency mass is one gender.
    """
    from stereoset_eval.curation.lexicon import KIND_OF

    for side, tokens in (("more", analysis.more_tokens), ("less", analysis.less_tokens)):
        span_idx = {i for sp in analysis.of_kind("group") for i, _ in (sp.more if side == "more" else sp.less)}
        words = [t.lower() for t in tokens if is_word(t)]
        swapped = set()
        for i in span_idx:
            w = split_clitic(tokens[i])[0].lower()
            if w not in GENDER_OF:
                continue
            if KIND_OF.get(w) in ("pronoun", "possessive", "reflexive"):
                swapped.add(GENDER_OF[w])
            elif KIND_OF.get(w) == "group" and not w.endswith(("men", "s")):
                # a singular group noun describes the named person only as what they are "being"
                k = sum(1 for t in tokens[:i] if is_word(t))
                if "being" in words[max(0, k - 5):k]:
                    swapped.add(GENDER_OF[w])
        if len(swapped) != 1 or any(name_gender(split_clitic(tokens[i])[0])[0] for i in span_idx):
            continue  # a swapped name is the target: other names are other people
        g = swapped.pop()
        names = []
        for i, tok in enumerate(tokens):
            base = split_clitic(tok)[0]
            if i in span_idx or not is_word(tok):
                continue
            known, ng = name_gender(base)
            if known and ng is None:
                dg, share = name_counterparts.name_gender_share(base)
                ng = dg if share >= name_counterparts.MIN_GENDER_SHARE else None
            if known:
                names.append((base, ng))
        # a name of either gender may be the one the swapped word refers to: no conflict then
        if names and all(ng is not None and ng != g for _, ng in names):
            return f"sent_{side}: {', '.join(n for n, _ in names)} read as {names[0][1]} but the swapped word is {g}"
    return None


def ambiguous_name_swap(analysis: PairAnalysis) -> str | None:
    """A name swapped for a name that is not clearly of the other gender ("Jenny" / "Alex").

    A name read as either gender (the names lexicon's unisex list, and under 90 % one gender in
    the name dictionary) does not make a gender swap; a person decides (the issue's "Jenny/Alex").
    """
    for span in analysis.of_kind("group"):
        for (i, a), (j, b) in zip(span.more, span.less):
            for tok in (a, b):
                base = split_clitic(tok)[0]
                known, g = name_gender(base)
                if known and g is None:
                    _, share = name_counterparts.name_gender_share(base)
                    if share < name_counterparts.MIN_GENDER_SHARE:
                        return f"{a} / {b}: {base} is read as either gender"
    return None


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
        return Decision(pair.id, inst_id, "review",
                        f"no swappable gender term outside the attribute in {role}"
                        + (f" (given names are not swapped: {names})" if names else ""),
                        "name_left_alone" if names else "attribute_perturbation", attribute_words=attr)
    # a possessor's name is someone else and stays by design ("Judy's male friend" / "Judy's female friend")
    gendered_names = [f"{n} ({g})" for _, n, g in r.names_left if g and not (pair.target and n.endswith("'s"))]
    if gendered_names:
        return Decision(pair.id, inst_id, "review",
                        f"given name(s) {', '.join(gendered_names)} left alone in the swapped {role}; "
                        "pronouns that refer to them would now disagree", "name_left_alone",
                        attribute_words=attr)
    kept, swapped = (text, role), (r.text, role)
    more, less = (swapped, kept) if swap_into == "sent_more" else (kept, swapped)
    direction = pair.direction if side == "more" else FLIP.get(pair.direction or "stereo", "antistereo")
    flags = swap_flags(inst_id, r, swap_into)
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
        conflict = None if stereoset_like else name_conflict(analysis)
        if conflict:
            return [Decision(pair.id, pair.id, "review", "a name contradicts the swap: " + conflict, "name_conflict")]
        ambiguous = None if stereoset_like else ambiguous_name_swap(analysis)
        if ambiguous:
            return [Decision(pair.id, pair.id, "review", "no clear gender swap: " + ambiguous, "ambiguous_name_swap")]
        inst = pair.replace(flags=_load_flags(pair, pair.id))
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
