"""Stereotype-dimension tags (BMNE paper §5.1, App. C.3): lexicon suggestions, human overrides.

:func:`suggest_dimension` looks for cue words of the four dimensions
(:mod:`stereoset_eval.curation.lexicon.dimension_terms`) first in the pair's *attribute* (the words that
differ, when the pair was normalised from an attribute perturbation), then in the rest of
``sent_more`` (gendered words and names excluded). Several dimensions matching at the same
stage are resolved by the paper's tie rule, Roles and Behaviors > Attitudes and Beliefs >
Personality Traits, with **Physical Characteristics last**: in these sentences a body word
usually serves the role or judgement the stereotype is about ("too fragile to be good
soldiers"), so it wins only alone ("The male is strong"). The order is the ``priority``
parameter and is recorded. Rules 2.2: a physical-strength cue ("muscles", "bodybuilder") decides
Physical Characteristics before the tie rule (``strength_first``, recorded as
``dimension_strength_first``). With no cue word and no attribute (an as-is pair: the whole sentence
is the stereotype), a grammar stage: a sentence with an action verb
(past or progressive form, a base verb after "to") says what someone does → Roles and Behaviors,
evidence ``where: grammar``. Nothing at all → dimension None and a ``needs_annotation`` flag.

Tags travel on the item: ``item.dimension`` plus one ``dimension_tag`` flag (``info``)
whose evidence holds the label, the tag source (``auto`` or ``human``) and the matches.
:func:`apply_human_tags` (used by the Label Studio import) always overrides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.items import Flag, Item
from stereoset_eval.curation.lexicon.dimension_terms import (
    DIMENSION_WORDS, FRAMES, PATTERNS, PERSON_NOUNS, PHYSICAL_STRENGTH, TREATED,
)
from stereoset_eval.curation.spans import term_info
from stereoset_eval.curation.text import is_word, tokenize

# words ending in -ed / -ing that are trait or body adjectives, not actions
DIMENSION_ADJECTIVES = DIMENSION_WORDS["Personality Traits"] | DIMENSION_WORDS["Physical Characteristics"]

DIMENSIONS: tuple[str, ...] = (
    "Personality Traits", "Attitudes and Beliefs", "Roles and Behaviors", "Physical Characteristics",
)
DEFAULT_PRIORITY: tuple[str, ...] = (
    "Roles and Behaviors", "Attitudes and Beliefs", "Personality Traits", "Physical Characteristics",
)
TAG_RULE = "dimension_tag"
NEEDS_ANNOTATION = "needs_annotation"
TAG_SOURCES: tuple[str, ...] = ("auto", "human")


@dataclass(frozen=True)
class DimensionTag:
    """A dimension label for one item, who gave it, and why."""

    item_id: str
    label: str | None
    source: str = "auto"
    evidence: tuple[dict[str, str], ...] = ()
    annotator: str | None = None

    def __post_init__(self) -> None:
        if self.label is not None and self.label not in DIMENSIONS:
            raise UnknownNameError("dimension", self.label, DIMENSIONS)
        if self.source not in TAG_SOURCES:
            raise UnknownNameError("tag source", self.source, TAG_SOURCES)


def stems(word: str) -> list[str]:
    """The word and simple inflection stems (``cooking`` → ``cook``, ``cooke``).

    >>> stems("cooking"), stems("stories"), stems("timidly")
    (['cooking', 'cook', 'cooke'], ['stories', 'story', 'stori', 'storie'], ['timidly', 'timid', 'timidle'])
    """
    out = [word]
    if word.endswith("ily") and len(word) > 5:  # hastily -> hasty
        out.append(word[:-3] + "y")
    elif word.endswith("ly") and len(word) > 5:  # timidly -> timid, gently -> gentle
        out += [word[:-2], word[:-1] + "e"]
    if word.endswith("ies") and len(word) > 4:
        out.append(word[:-3] + "y")
    for suf in ("ing", "ed", "es", "s", "d"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            base = word[: -len(suf)]
            out.append(base)
            if suf in ("ing", "ed"):
                out.append(base + "e")
                if len(base) > 3 and base[-1] == base[-2]:
                    out.append(base[:-1])
    return list(dict.fromkeys(out))


def match_words(words: Iterable[str], where: str) -> list[dict[str, str]]:
    """Cue-word matches: ``{"dimension", "word", "entry", "where"}`` per hit."""
    hits = []
    for w in words:
        for cand in stems(w.lower()):
            found = [d for d in DIMENSIONS if cand in DIMENSION_WORDS[d]]
            for d in found:
                hits.append({"dimension": d, "word": w, "entry": cand, "where": where})
            if found:
                break
    return hits


def match_patterns(text: str, where: str, patterns: Mapping[str, Sequence[str]] = PATTERNS) -> list[dict[str, str]]:
    """Pattern matches over the lower-cased ``text`` (``patterns``: dimension → regular expressions)."""
    hits = []
    for d, pats in patterns.items():
        for pat in pats:
            m = re.search(pat, text.lower())
            if m:
                hits.append({"dimension": d, "word": m.group(0), "entry": pat, "where": where})
    return hits


def context_words(text: str) -> list[str]:
    """Words of ``text`` that are not gendered words or names."""
    tokens = tokenize(text)
    return [t for i, t in enumerate(tokens) if is_word(t) and term_info(tokens, i).kind == "plain"]


POSSESSIVES = frozenset("her his my your our their".split())


def possessed_words(text: str) -> set[str]:
    """Person nouns right after a possessive determiner ("her boss"): someone else, not the target.

    A role noun there names another person of the sentence, so it is no evidence of the target's
    role ("Marie timidly asked her boss" is about Marie's timidity, not about bosses).
    """
    ws = [t for t in tokenize(text) if is_word(t)]
    return {ws[k + 1].lower() for k in range(len(ws) - 1)
            if ws[k].lower() in POSSESSIVES and ws[k + 1].lower() in PERSON_NOUNS}


def treatment_of_others(text: str, attribute_words: Sequence[str]) -> list[dict[str, str]]:
    """A Roles and Behaviors hit when the attribute is aimed at other people ("caring to my sisters").

    >>> [h["word"] for h in treatment_of_others("My mother was always caring to my sisters", ["caring"])]
    ['caring to my sisters']
    >>> treatment_of_others("My mother was always caring", ["caring"])
    []
    """
    ws = [t.lower() for t in tokenize(text) if is_word(t)]
    attr = {w.lower() for w in attribute_words}
    for k, w in enumerate(ws[:-2]):
        if w not in attr or ws[k + 1] not in ("to", "towards", "toward"):
            continue
        j = k + 2
        if ws[j] in POSSESSIVES or ws[j] in ("the", "other", "all"):
            j += 1
        if j < len(ws) and ws[j] in TREATED:
            return [{"dimension": "Roles and Behaviors", "word": " ".join(ws[k:j + 1]),
                     "entry": "trait aimed at others", "where": "attribute"}]
    return []


def manner_words(text: str) -> set[str]:
    """Adjectives of an "as X as <pronoun> could/can" intensifier: how hard an action is done.

    "She was running as fast as she could" is about the running, not about the body, so "fast"
    there is no Physical Characteristics cue.

    >>> manner_words("She was running as fast as she could to escape."), manner_words("He is as strong as an ox")
    ({'fast'}, set())
    """
    pat = r"\bas (\w+) as (?:he|she|they|i|we|you|one) (?:could|can|possibly could)\b"
    return {m.group(1) for m in re.finditer(pat, text.lower())}


def decide(hits: Sequence[dict[str, str]], priority: Sequence[str] = DEFAULT_PRIORITY, *,
           strength_first: bool = True) -> str | None:
    """The highest-priority dimension among ``hits`` (None when there are none).

    ``strength_first`` (rules 2.2): a physical-strength cue (``PHYSICAL_STRENGTH``) decides
    Physical Characteristics before the tie rule.

    >>> hits = [{"dimension": "Attitudes and Beliefs", "word": "appreciate", "entry": "appreciate"},
    ...         {"dimension": "Physical Characteristics", "word": "muscles", "entry": "muscles"}]
    >>> decide(hits), decide(hits, strength_first=False)
    ('Physical Characteristics', 'Attitudes and Beliefs')
    """
    if strength_first and any(str(h.get(k, "")).lower() in PHYSICAL_STRENGTH for h in hits for k in ("word", "entry")):
        return "Physical Characteristics"
    found = {h["dimension"] for h in hits}
    return next((d for d in priority if d in found), None)


def suggest_dimension(item: Item, *, attribute_words: Sequence[str] | None = None,
                      priority: Sequence[str] = DEFAULT_PRIORITY, strength_first: bool = True) -> DimensionTag:
    """Lexicon suggestion for ``item`` (attribute first, then the rest of ``sent_more``)."""
    if sorted(priority) != sorted(DIMENSIONS):
        raise ValueError(f"priority must order exactly the four dimensions {DIMENSIONS}")
    stages = []
    if attribute_words:
        aimed = treatment_of_others(item.text("sent_more"), attribute_words)
        stages.append(aimed or match_words(attribute_words, "attribute"))
    text = item.text("sent_more")
    owned = possessed_words(text)
    manner = manner_words(text)
    sentence_hits = [h for h in match_words(context_words(text), "sentence") + match_patterns(text, "sentence")
                     if not (h["dimension"] == "Roles and Behaviors" and h["word"].lower() in owned)
                     and not (h["dimension"] == "Physical Characteristics" and h["word"].lower() in manner)]
    frames = [h for h in match_patterns(text, "frame", FRAMES)]
    stages.append(frames + sentence_hits if frames and not attribute_words else sentence_hits)
    for hits in stages:
        framed = [h for h in hits if h["where"] == "frame"]
        label = framed[0]["dimension"] if framed else decide(hits, priority, strength_first=strength_first)
        if label:
            return DimensionTag(item.id, label, "auto", tuple(hits))
    verbs = [] if attribute_words else action_verbs(text)
    if verbs:
        hits = [{"dimension": "Roles and Behaviors", "word": v, "entry": "action verb", "where": "grammar"} for v in verbs]
        return DimensionTag(item.id, "Roles and Behaviors", "auto", tuple(hits))
    return DimensionTag(item.id, None, "auto", ())


COPULAR = frozenset("be is are was were been being am seem seems seemed look looks looked feel feels felt become "
                    "became get gets got have has had do does did".split())


def action_verbs(text: str) -> list[str]:
    """Words of ``text`` that read as action verbs (past or progressive forms, base verbs after "to").

    The grammar stage of :func:`suggest_dimension`: a sentence that says what someone *does*
    (Appendix C.3: observable actions) is Roles and Behaviors when no cue word matched.
    Copulas and auxiliaries are not actions ("She is nice" stays unmatched).

    >>> action_verbs("She hummed quietly while waiting for the bus."), action_verbs("Women are so nice.")
    (['hummed', 'waiting'], [])
    """
    from stereoset_eval.curation.lexicon import function_words as fw

    ws = context_words(text)
    low = [w.lower() for w in ws]
    out = []
    for k, w in enumerate(low):
        if w in COPULAR or w in fw.AUXILIARIES or w in fw.PREPOSITIONS or w in fw.DETERMINERS:
            continue
        irregular = w in IRREGULAR_PAST
        inflected = len(w) > 4 and (w.endswith("ed") or w.endswith("ing")) and w not in DIMENSION_ADJECTIVES
        after_to = k > 0 and low[k - 1] == "to" and w in fw.BASE_VERBS
        if irregular or inflected or after_to:
            out.append(ws[k])
    return out


IRREGULAR_PAST = frozenset("said made took went came gave told saw ran ate drove wrote bought brought thought "
                           "left kept held sat stood fought threw caught built spent won lost sold paid".split())


def tag_flag(tag: DimensionTag) -> Flag:
    evidence: dict[str, Any] = {"label": tag.label, "source": tag.source, "matches": [dict(h) for h in tag.evidence]}
    if tag.annotator:
        evidence["annotator"] = tag.annotator
    return Flag(TAG_RULE, tag.item_id, "info", f"dimension {tag.label!r} ({tag.source})", evidence)


def with_tag(item: Item, tag: DimensionTag) -> Item:
    """``item`` with ``tag`` applied: dimension set, previous tag flags replaced."""
    flags = [f for f in item.flags if f.rule not in (TAG_RULE, NEEDS_ANNOTATION)]
    flags.append(tag_flag(tag))
    if tag.label is None and tag.source == "auto":
        flags.append(Flag(NEEDS_ANNOTATION, item.id, "warning", "no dimension cue found: needs annotation", {}))
    return item.replace(dimension=tag.label, flags=tuple(flags))


def tag_of(item: Item) -> DimensionTag | None:
    """The tag recorded on ``item`` (None if it was never tagged)."""
    for f in reversed(item.flags):
        if f.rule == TAG_RULE:
            ev = f.evidence
            return DimensionTag(item.id, ev.get("label"), ev.get("source", "auto"),
                                tuple(dict(h) for h in ev.get("matches", ())), ev.get("annotator"))
    return None


def tag_items(items: Sequence[Item], *, attribute_words: Mapping[str, Sequence[str]] | None = None,
              priority: Sequence[str] = DEFAULT_PRIORITY, strength_first: bool = True) -> list[Item]:
    """Auto-tag every item that has no human tag (human tags are never overwritten)."""
    out = []
    for it in items:
        current = tag_of(it)
        if current is not None and current.source == "human":
            out.append(it)
            continue
        tag = suggest_dimension(it, attribute_words=(attribute_words or {}).get(it.id), priority=priority,
                                strength_first=strength_first)
        out.append(with_tag(it, tag))
    return out


def apply_human_tags(items: Sequence[Item], tags: Mapping[str, str | None] | Iterable[DimensionTag], *,
                     annotator: str | None = None) -> list[Item]:
    """Override dimensions with human tags (item id -> label, or :class:`DimensionTag` records).

    Every tag must name an item in ``items``; a label of None records "a person found no
    dimension" (no ``needs_annotation`` flag). The tag source is recorded as ``human``.
    """
    if isinstance(tags, Mapping):
        records = [DimensionTag(i, lab, "human", (), annotator) for i, lab in tags.items()]
    else:
        records = [DimensionTag(t.item_id, t.label, "human", t.evidence, t.annotator or annotator) for t in tags]
    known = {it.id for it in items}
    unknown = sorted({t.item_id for t in records} - known)
    if unknown:
        raise StereosetEvalError(f"human tags name {len(unknown)} unknown item id(s): {', '.join(unknown[:10])}")
    by_id = {t.item_id: t for t in records}
    return [with_tag(it, by_id[it.id]) if it.id in by_id else it for it in items]
