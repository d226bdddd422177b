"""Rules about how the two sentences of a pair differ (token diff, :mod:`stereoset_eval.curation.spans`).

A valid gender minimal pair differs only by gendered words or names (one consistent
swap, possibly at several positions: he/she … his/her). These rules flag the other cases;
``attribute_perturbation`` is the trigger of normalisation (:mod:`stereoset_eval.curation.normalise`).
"""

from __future__ import annotations

import re

from stereoset_eval.foundation.items import Flag, Item
from stereoset_eval.curation.rules.registry import rule
from stereoset_eval.curation.spans import is_group_term, term_info
from stereoset_eval.curation.lexicon.gender_terms import plural
from stereoset_eval.curation.lexicon.group_terms import other_group_category
from stereoset_eval.curation.text import is_word, split_clitic, words


def _has_target(text: str, target: str) -> bool:
    """True if ``text`` contains the StereoSet target term (or its plural)."""
    t = target.lower().strip()
    forms = {t, plural(t) or t, t + "s"}
    return any(split_clitic(w)[0] in forms for w in words(text))


def _spans(spans) -> list[dict]:
    return [s.to_dict() for s in spans]


@rule("identical_pair", effect="remove", order=20, needs=("pair_analysis",), severity="error",
      description="The two sentences have the same words (case, punctuation and spelling variants aside): "
                  "the pair cannot discriminate.")
def identical_pair(item: Item, ctx) -> Flag | None:
    a = ctx.analysis(item)
    if a.of_kind("group", "mixed", "attribute", "other_group", "mismatch"):
        return None
    variants = a.of_kind("variant")
    msg = ("sentences differ only by spelling variants: " + "; ".join(
        f"{s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in variants)) if variants else "sentences differ in no word"
    return ctx.rule.flag(item, msg, {"spans": _spans(variants)})


@rule("multiple_spans", needs=("pair_analysis",),
      description="More than one perturbation between the sentences (token diff): a consistent group swap "
                  "counts once, every other differing span once more.")
def multiple_spans(item: Item, ctx) -> Flag | None:
    a = ctx.analysis(item)
    if a.perturbations <= 1:
        return None
    spans = a.of_kind("group", "mixed", "attribute", "other_group", "mismatch")
    return ctx.rule.flag(
        item, f"{a.perturbations} perturbations: " + "; ".join(f"{s.kind} {s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in spans),
        {"perturbations": a.perturbations, "spans": _spans(spans)},
    )


@rule("attribute_perturbation", needs=("pair_analysis",),
      description="A differing span is not a group term of the item's bias type (the attribute was perturbed, "
                  "e.g. trunks/bikini): normalised into gender-swapped pairs, one per attribute.")
def attribute_perturbation(item: Item, ctx) -> Flag | None:
    a = ctx.analysis(item)
    spans = a.of_kind("attribute", "mixed")
    if not spans:
        return None
    return ctx.rule.flag(
        item, "attribute perturbed: " + "; ".join(f"{s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in spans),
        {"spans": _spans(spans), "more_attribute": a.attribute_words("more"), "less_attribute": a.attribute_words("less")},
    )


@rule("mismatched_group_category", effect="remove", order=60, scope="untargeted", needs=("pair_analysis", "lexicon"), severity="error",
      description="The perturbed terms belong to different categories: a group term on one side only "
                  "(e.g. 'House burglars'/'Women').")
def mismatched_group_category(item: Item, ctx) -> Flag | None:
    spans = ctx.analysis(item).of_kind("mismatch")
    if not spans:
        return None
    return ctx.rule.flag(
        item, "group term on one side only: " + "; ".join(f"{s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in spans),
        {"spans": _spans(spans)},
    )


@rule("other_group_marker", effect="remove", order=70, scope="untargeted", needs=("pair_analysis", "lexicon"), severity="error",
      description="The perturbation is a marker of another social category (age, race, gender identity, "
                  "religion, ...; e.g. 'young/old grandfather'): not a gender stereotype pair.")
def other_group_marker(item: Item, ctx) -> Flag | None:
    a = ctx.analysis(item)
    hits = [s for s in a.of_kind("other_group", "mismatch") if any(k.startswith("other_group") for _, _, k in s.evidence)]
    if not hits:
        return None
    cats = sorted({k.split(":")[-1] for s in hits for _, _, k in s.evidence if k.startswith("other_group")})
    return ctx.rule.flag(
        item, f"perturbation is a {'/'.join(cats)} marker: " + "; ".join(f"{s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in hits),
        {"categories": cats, "spans": _spans(hits)},
    )


@rule("attribute_is_gender_term", effect="remove", order=40, needs=("pair_analysis", "lexicon"), severity="error",
      description="StereoSet options (the attribute) differ by a gender term while the target stays "
                  "(e.g. 'She, herself, is a girl/boy'): the pair tests agreement, not a stereotype.")
def attribute_is_gender_term(item: Item, ctx) -> Flag | None:
    if item.target is None or not all(_has_target(s.text, item.target) for s in item.sentences):
        return None  # not a StereoSet option pair (a swapped instance changes the target)
    spans = ctx.analysis(item).of_kind("group", "mixed")
    if not spans:
        return None
    return ctx.rule.flag(
        item, "options differ by gender term(s): " + "; ".join(f"{s.to_dict()['more']!r}/{s.to_dict()['less']!r}" for s in spans),
        {"spans": _spans(spans), "target": item.target},
    )


@rule("no_group_term", effect="remove", order=30, needs=("lexicon",), severity="error",
      description="Neither sentence contains a group term of the item's bias type (mislabelled bias type, "
                  "or an unknown spelling such as 'gentlement').")
def no_group_term(item: Item, ctx) -> Flag | None:
    a = ctx.analysis(item)
    for tokens in (list(a.more_tokens), list(a.less_tokens)):
        for i, t in enumerate(tokens):
            if is_word(t):
                info = term_info(tokens, i)
                if info.kind != "possible_name" and is_group_term(info, item.bias_type):
                    return None
    others = sorted({w for s in a.spans for _, w, k in s.evidence if k.startswith("other_group")})
    return ctx.rule.flag(
        item, f"no {item.bias_type} term in either sentence" + (f"; other group terms: {', '.join(others)}" if others else ""),
        {"other_group_terms": others},
    )


BORN_AS = re.compile(r"\bborn (?:a|as a) (?:man|woman|boy|girl|male|female)\b", re.IGNORECASE)
CONTENT_CATEGORIES = ("gender-identity", "sexual-orientation")
# markers that are mostly something else outside a perturbation ("ate it straight from the tub")
CONTENT_AMBIGUOUS = frozenset({"straight"})


@rule("other_group_content", effect="remove", order=80, needs=("lexicon",), severity="error",
      description="Both sentences are about gender identity or sexual orientation (a marker anywhere in the "
                  "text, or 'born a man'): not a binary gender stereotype, the pair is removed (not_gender).")
def other_group_content(item: Item, ctx) -> Flag | None:
    hits = []
    for s in item.sentences:
        for w in words(s.text):
            cat = other_group_category(w)
            if cat in CONTENT_CATEGORIES and w not in CONTENT_AMBIGUOUS:
                hits.append({"role": s.role, "word": w, "category": cat})
        for m in BORN_AS.finditer(s.text):
            hits.append({"role": s.role, "word": m.group(0), "category": "gender-identity"})
    if len({h["role"] for h in hits}) < len(item.sentences):
        return None  # on one side only it is the perturbation (other_group_marker decides that)
    cats = sorted({h["category"] for h in hits})
    return ctx.rule.flag(
        item, f"{'/'.join(cats)} content: " + ", ".join(sorted({h['word'] for h in hits})), {"hits": hits})
