"""Where the two sentences of a pair differ, and what kind of word each difference is.

The pair's word tokens (:func:`stereoset_eval.curation.text.word_positions`, compared lower-cased) are
aligned with ``difflib.SequenceMatcher`` (``autojunk=False``); every non-equal block is a
:class:`Span` of one kind:

* ``group`` — both sides are group terms of the item's bias type (gender: gendered words,
  given names): the perturbation a minimal pair should have.
* ``mixed`` — both sides hold group terms plus other differing words (``Men gamers``/``Women``).
* ``attribute`` — no group term on either side (``caring``/``mean``, ``trunks``/``bikini``).
* ``other_group`` — a marker of another social category (``young``/``old``, ``trans``/``cis``).
* ``mismatch`` — a group term on one side only (``House burglars``/``Women``).
* ``variant`` — a spelling variant of the same word (``becasue``/``because``,
  ``develop``/``developed``; see :func:`is_spelling_variant`); not counted as a perturbation.

Punctuation, whitespace and case differences are ignored. Rules, normalisation and the
dimension tagger all read the same :class:`PairAnalysis`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from stereoset_eval.foundation.items import Item
from stereoset_eval.curation.lexicon import GENDER_OF, name_gender
from stereoset_eval.curation.lexicon.group_terms import other_group_category
from stereoset_eval.curation.text import SENTENCE_END, is_word, split_clitic, tokenize

SPAN_KINDS: tuple[str, ...] = ("group", "mixed", "attribute", "other_group", "mismatch", "variant")


@dataclass(frozen=True)
class TermInfo:
    """What one word token is: ``gender`` term, ``name``, ``possible_name``, ``other_group``, ``plain``."""

    kind: str
    gender: str | None = None
    entry: str | None = None
    category: str | None = None


def _sentence_initial(tokens: list[str], index: int) -> bool:
    for tok in reversed(tokens[:index]):
        if tok.isspace():
            continue
        return tok in SENTENCE_END or tok in "\"'“‘(" or False
    return True


def term_info(tokens: list[str], index: int) -> TermInfo:
    """Classify ``tokens[index]`` (a word token of :func:`tokenize`) for a gender pair."""
    tok = tokens[index]
    base, _ = split_clitic(tok)
    low = base.lower()
    if low in GENDER_OF:
        return TermInfo("gender", GENDER_OF[low], low)
    is_name, gender = name_gender(base)
    if is_name:
        return TermInfo("name", gender, base)
    category = other_group_category(low)
    if category:
        return TermInfo("other_group", entry=low, category=category)
    if base[:1].isupper() and not base.isupper() and not _sentence_initial(tokens, index):
        return TermInfo("possible_name", entry=base)
    return TermInfo("plain", entry=low)


def is_group_term(info: TermInfo, bias_type: str) -> bool:
    """True if the term marks a group of ``bias_type`` (gender: gendered words and names)."""
    if bias_type == "gender":
        return info.kind in ("gender", "name", "possible_name")
    return info.kind == "other_group" and info.category == bias_type


def is_other_group_term(info: TermInfo, bias_type: str) -> bool:
    """True if the term marks a group of a category other than ``bias_type``."""
    if bias_type == "gender":
        return info.kind == "other_group"
    return info.kind in ("gender", "name") or (info.kind == "other_group" and info.category != bias_type)


@dataclass(frozen=True)
class Span:
    """One differing block: ``(token index, token)`` on each side, its kind and evidence."""

    kind: str
    more: tuple[tuple[int, str], ...]
    less: tuple[tuple[int, str], ...]
    evidence: tuple[tuple[str, str, str], ...] = ()  # (side, token, what) per classified token

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "more": " ".join(t for _, t in self.more),
            "less": " ".join(t for _, t in self.less),
            "terms": [list(e) for e in self.evidence],
        }


@dataclass(frozen=True)
class PairAnalysis:
    """The spans of a pair item and the counts rules and normalisation decide on."""

    item_id: str
    bias_type: str
    spans: tuple[Span, ...]
    more_tokens: tuple[str, ...]
    less_tokens: tuple[str, ...]

    def of_kind(self, *kinds: str) -> tuple[Span, ...]:
        return tuple(s for s in self.spans if s.kind in kinds)

    @property
    def perturbations(self) -> int:
        """Distinct perturbations: one for the (consistent) group swap, one per other span."""
        group = 1 if self.of_kind("group", "mixed") else 0
        return group + len(self.of_kind("attribute", "mixed", "other_group", "mismatch"))

    @property
    def is_pure_group_swap(self) -> bool:
        return bool(self.of_kind("group")) and not self.of_kind("attribute", "mixed", "other_group", "mismatch")

    def attribute_indices(self, side: str) -> frozenset[int]:
        """Token indices (in ``side``'s sentence) of the non-group words of non-group spans."""
        out: set[int] = set()
        tokens = list(self.more_tokens if side == "more" else self.less_tokens)
        for span in self.of_kind("attribute", "mixed", "other_group", "mismatch"):
            for i, _ in (span.more if side == "more" else span.less):
                if not is_group_term(term_info(tokens, i), self.bias_type):
                    out.add(i)
        return frozenset(out)

    def attribute_words(self, side: str) -> list[str]:
        tokens = self.more_tokens if side == "more" else self.less_tokens
        return [tokens[i].lower() for i in sorted(self.attribute_indices(side))]


def _classify(more: list[tuple[int, str]], less: list[tuple[int, str]], mt: list[str], lt: list[str],
              bias_type: str) -> tuple[str, tuple[tuple[str, str, str], ...]]:
    infos_m = [term_info(mt, i) for i, _ in more]
    infos_l = [term_info(lt, i) for i, _ in less]
    # a capitalised word facing a known name is a name too (``Ca'daan`` / ``Susan``)
    has_name_m = any(x.kind == "name" for x in infos_m)
    has_name_l = any(x.kind == "name" for x in infos_l)
    infos_m = [TermInfo("possible_name", entry=t) if x.kind == "plain" and has_name_l and t[:1].isupper() else x
               for x, (_, t) in zip(infos_m, more)]
    infos_l = [TermInfo("possible_name", entry=t) if x.kind == "plain" and has_name_m and t[:1].isupper() else x
               for x, (_, t) in zip(infos_l, less)]
    evidence = tuple(
        (side, tok, x.kind + (f":{x.gender}" if x.gender else "") + (f":{x.category}" if x.category else ""))
        for side, pairs, infos in (("more", more, infos_m), ("less", less, infos_l))
        for (_, tok), x in zip(pairs, infos) if x.kind != "plain"
    )
    grp_m = [is_group_term(x, bias_type) for x in infos_m]
    grp_l = [is_group_term(x, bias_type) for x in infos_l]
    other = any(is_other_group_term(x, bias_type) for x in infos_m + infos_l)
    if more and less and all(grp_m) and all(grp_l):
        return "group", evidence
    if any(grp_m) and any(grp_l):
        rest_m = [t for (_, t), g in zip(more, grp_m) if not g]
        rest_l = [t for (_, t), g in zip(less, grp_l) if not g]
        return ("group" if _is_variant(rest_m, rest_l) else "mixed"), evidence
    if any(grp_m) or any(grp_l):
        return "mismatch", evidence
    if other:
        return "other_group", evidence
    if _is_variant([t for _, t in more], [t for _, t in less]):
        return "variant", evidence
    return "attribute", evidence


NEGATION_PREFIXES = ("un", "in", "im", "ir", "il", "dis", "non", "mis")
INFLECTIONS = ("s", "es", "ed", "d", "ing", "'s")


def edit_distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance (optimal string alignment: an adjacent swap costs 1).

    >>> edit_distance("becasue", "because"), edit_distance("mexican", "american")
    (1, 2)
    """
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def is_affix_antonym(a: str, b: str) -> bool:
    """True if one word is the other with a negating prefix ("caring" / "uncaring", "like" / "dislike").

    >>> is_affix_antonym("caring", "uncaring"), is_affix_antonym("to", "told")
    (True, False)
    """
    return any(a == p + b or b == p + a for p in NEGATION_PREFIXES)


def is_spelling_variant(a: str, b: str) -> bool:
    """True if ``a`` and ``b`` (lower case) spell the same word: an inflection, or a typo.

    A typo is one edit (insertion, deletion, substitution or adjacent swap) in words of
    five letters or more. Antonyms built by affixes are never variants.

    >>> [is_spelling_variant(*p) for p in [("develop", "developed"), ("becasue", "because"),
    ...  ("afaid", "afraid"), ("caring", "uncaring"), ("emotional", "emotionless"),
    ...  ("mexican", "american"), ("tallest", "smallest"), ("were", "are")]]
    [True, True, True, False, False, False, False, False]
    """
    if a == b or a.replace(" ", "") == b.replace(" ", ""):
        return True
    if is_affix_antonym(a, b):
        return False
    if "less" in (a[-4:], b[-4:]) or "ful" in (a[-3:], b[-3:]):
        stem_a, stem_b = a.removesuffix("less").removesuffix("ful"), b.removesuffix("less").removesuffix("ful")
        if stem_a[:4] == stem_b[:4]:
            return False
    short, long_ = sorted((a, b), key=len)
    if any(long_ == short + suf for suf in INFLECTIONS) or (short.endswith("e") and long_ == short[:-1] + "ing"):
        return True
    return min(len(a), len(b)) >= 5 and edit_distance(a, b) <= 1


def _is_variant(a_tokens: list[str], b_tokens: list[str]) -> bool:
    """Both sides non-empty and spelled alike (``develop``/``developed``, ``becasue``/``because``)."""
    a = " ".join(t.lower() for t in a_tokens)
    b = " ".join(t.lower() for t in b_tokens)
    return bool(a and b) and is_spelling_variant(a, b)


def align_words(a: list[str], b: list[str]) -> list[tuple[int, int, int, int]]:
    """Differing blocks ``(i1, i2, j1, j2)`` between two word lists.

    ``difflib`` alignment, except that equal-length lists are compared position by position
    when that changes fewer words (``women than men`` / ``men than women`` is two
    substitutions, not an insertion and a deletion).
    """
    ops = [(i1, i2, j1, j2) for op, i1, i2, j1, j2 in
           difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op != "equal"]
    if len(a) != len(b):
        return ops
    diff_pos = [k for k in range(len(a)) if a[k] != b[k]]
    if len(diff_pos) > sum(max(i2 - i1, j2 - j1) for i1, i2, j1, j2 in ops):
        return ops
    blocks: list[tuple[int, int, int, int]] = []
    for k in diff_pos:
        if blocks and blocks[-1][1] == k:
            i1, _, j1, _ = blocks[-1]
            blocks[-1] = (i1, k + 1, j1, k + 1)
        else:
            blocks.append((k, k + 1, k, k + 1))
    return blocks


def diff_sentences(more_text: str, less_text: str, *, bias_type: str = "gender", item_id: str = "") -> PairAnalysis:
    """Align two sentences word by word and classify every differing block.

    >>> a = diff_sentences("Women don't know how to drive.", "Men know how to drive.")
    >>> [(s.kind, s.to_dict()["more"], s.to_dict()["less"]) for s in a.spans], a.perturbations
    ([('mixed', "Women don't", 'Men')], 2)
    """
    mt, lt = tokenize(more_text), tokenize(less_text)
    mw = [(i, t) for i, t in enumerate(mt) if is_word(t)]
    lw = [(i, t) for i, t in enumerate(lt) if is_word(t)]
    spans = []
    for i1, i2, j1, j2 in align_words([t.lower() for _, t in mw], [t.lower() for _, t in lw]):
        kind, evidence = _classify(mw[i1:i2], lw[j1:j2], mt, lt, bias_type)
        spans.append(Span(kind, tuple(mw[i1:i2]), tuple(lw[j1:j2]), evidence))
    return PairAnalysis(item_id, bias_type, tuple(spans), tuple(mt), tuple(lt))


def analyse_pair(item: Item) -> PairAnalysis:
    """:func:`diff_sentences` of a pair item's ``sent_more`` and ``sent_less``."""
    return diff_sentences(item.text("sent_more"), item.text("sent_less"), bias_type=item.bias_type, item_id=item.id)


def gender_terms_in(text: str) -> list[tuple[int, str, str]]:
    """``(token index, token, gender)`` of every gendered word or gendered name in ``text``."""
    tokens = tokenize(text)
    out = []
    for i, t in enumerate(tokens):
        if is_word(t):
            info = term_info(tokens, i)
            if info.kind in ("gender", "name") and info.gender:
                out.append((i, t, info.gender))
    return out
