"""Target-only gender swap: which gendered words refer to the target and may change.

The paper writes "Her mother/father was very nurturing": only the target (StereoSet's target
term, ``mother``) and the words that refer to it change; the possessor ``Her``, other people
("caring to my sisters", "abusive to women") and relatives of the target stay. Given a sentence
and the target term, :func:`non_target_indices` returns the token indices of gendered words that
must NOT be swapped (passed to :func:`stereoset_eval.curation.gender_swap.swap_gender` as
``protect``):

* a gendered word of the *other* gender than the target refers to someone else, except the
  target term's own counterpart, which is the contrast group ("Males are more demanding bosses
  than females" → "Females … than males");
* a possessive determiner or a possessive noun right before a target mention is the possessor
  ("her mommy", "the girl's mommy");
* a gendered noun of the target's gender that is not the target is another person
  ("my sisters", "her crying daughter"), unless it is a group noun (``man``, ``girl``, ``male``
  …: "He saw himself as a tough man") or tied to the target by a copula ("My son is a
  schoolboy");
* partners (husband, wife, boyfriend, girlfriend …) of the other gender follow the
  ``partners`` policy: ``"swap"`` (default: the couple is swapped with the target, as CrowS-Pairs
  writes "expected his wife / her husband") or ``"keep"``.

Pronouns of the target's gender are swapped (they refer to the target or to someone we cannot
tell apart from it). When the target term is not found in the sentence nothing is protected
(every gendered word is swapped, the behaviour before rules 2.0).
"""

from __future__ import annotations

from stereoset_eval.curation.lexicon import GENDER_OF, KIND_OF, SWAPS
from stereoset_eval.curation.lexicon.gender_terms import AMBIGUOUS_GENDER, plural
from stereoset_eval.curation.text import is_word, split_clitic, tokenize

PARTNER_POLICIES: tuple[str, ...] = ("swap", "keep")
PARTNERS: frozenset[str] = frozenset(
    "husband husbands wife wives boyfriend boyfriends girlfriend girlfriends groom grooms bride brides "
    "fiance fiances fiancee fiancees widow widows widower widowers".split())
PRONOUN_KINDS = ("pronoun", "reflexive", "possessive")
COPULAS = frozenset("is was are were be being been becomes became".split())
LINK_WORDS = frozenset("a an the".split())


def target_forms(target: str) -> set[str]:
    """Lower-case forms of a StereoSet target term (``gentlemen`` → also ``gentleman``)."""
    t = target.lower().strip()
    forms = {t, t + "s", t + "'s"}
    p = plural(t)
    if p:
        forms.add(p)
    if t.endswith("men"):
        forms.add(t[:-3] + "man")
    if t.endswith("s"):
        forms.add(t[:-1])
    return forms


def _word_indices(tokens: list[str]) -> list[int]:
    return [i for i, t in enumerate(tokens) if is_word(t)]


def copula_linked(words_at: list[int], tokens: list[str], k: int, mentions: set[int]) -> bool:
    """True if word ``k`` (position in ``words_at``) and a target mention are joined by a copula."""
    low = [split_clitic(tokens[i])[0].lower() for i in words_at]
    for step in (1, -1):
        j = k + step
        if not (0 <= j < len(low)) or low[j] not in COPULAS:
            continue
        j += step
        if 0 <= j < len(low) and low[j] in LINK_WORDS:
            j += step
        if 0 <= j < len(low) and words_at[j] in mentions:
            return True
    return False




def non_target_indices(text: str, target: str | None, *, partners: str = "swap") -> frozenset[int]:
    """Token indices of gendered words in ``text`` that do not refer to ``target`` (see module doc).

    >>> from stereoset_eval.curation.gender_swap import swap_gender
    >>> s = "My mother was always patient with my sisters"
    >>> swap_gender(s, protect=non_target_indices(s, "mother")).text
    'My father was always patient with my sisters'
    >>> s = "The child drew her mommy as tall."
    >>> swap_gender(s, protect=non_target_indices(s, "mommy")).text
    'The child drew her daddy as tall.'
    """
    if partners not in PARTNER_POLICIES:
        raise ValueError(f"partners policy must be one of {PARTNER_POLICIES}, got {partners!r}")
    if not target:
        return frozenset()
    tokens = tokenize(text)
    forms = target_forms(target)
    words_at = _word_indices(tokens)
    mentions = {i for i in words_at if split_clitic(tokens[i])[0].lower() in forms or tokens[i].lower() in forms}
    if not mentions:
        return frozenset()
    tg = GENDER_OF.get(split_clitic(tokens[min(mentions)])[0].lower())
    if tg is None:
        from stereoset_eval.curation.consensus import target_gender

        tg = target_gender(target)
    counterparts = {SWAPS[f] for f in forms if f in SWAPS}
    protect: set[int] = set()
    for k, i in enumerate(words_at):
        if i in mentions:
            continue
        low = split_clitic(tokens[i])[0].lower()
        g = GENDER_OF.get(low) or AMBIGUOUS_GENDER.get(low)
        if g is None:
            continue
        kind = KIND_OF.get(low, "possessive" if low in AMBIGUOUS_GENDER else None)
        nxt = words_at[k + 1] if k + 1 < len(words_at) else None
        possessor = nxt in mentions and (kind == "possessive" or split_clitic(tokens[i])[1] == "'s")
        if possessor:
            protect.add(i)  # "her mommy", "the girl's mommy": the target's possessor
        elif kind in PRONOUN_KINDS:
            if g != tg:
                protect.add(i)
        elif low in PARTNERS and g != tg:
            if partners == "keep":
                protect.add(i)
        elif g != tg:
            if low not in counterparts:
                protect.add(i)  # another person; the target's own counterpart is a contrast ("males … than females")
        elif kind != "group" and not copula_linked(words_at, tokens, k, mentions):
            protect.add(i)
    return frozenset(protect)
