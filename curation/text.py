"""Tokenisation shared by the curation steps, defined once so every number can name it.

Three tokenisations, each with one job:

* :func:`tokenize` — lossless: words (letters/digits/underscore, with inner apostrophes as
  in ``ma'am``, ``he'd``, ``mother's``), runs of whitespace, and single punctuation marks.
  ``"".join(tokenize(t)) == t`` always holds, so an :class:`~stereoset_eval.foundation.items.Edit` index
  into this list can be applied and reverted exactly.
* :func:`word_positions` — the word tokens of :func:`tokenize` with their indices
  (punctuation and whitespace dropped); pair diffs and lexicon look-ups use these.
* :func:`whitespace_words` — ``str.split()``; the word count of the statistics tables.
"""

from __future__ import annotations

import re

TOKEN_RE = re.compile(r"\w+(?:['’]\w+)*|\s+|[^\w\s]")
WORD_RE = re.compile(r"\w")
CLITIC_RE = re.compile(r"^(?P<base>.+?)(?P<clitic>['’](?:s|d|ll|re|ve|m))$", re.IGNORECASE)
SENTENCE_END = frozenset(".!?;")


def tokenize(text: str) -> list[str]:
    """Lossless tokens of ``text`` (words, whitespace runs, punctuation marks).

    >>> tokenize("She'd ask her mom.")
    ["She'd", ' ', 'ask', ' ', 'her', ' ', 'mom', '.']
    """
    return TOKEN_RE.findall(text)


def is_word(token: str) -> bool:
    """True for word tokens (they contain a letter, digit or underscore)."""
    return bool(WORD_RE.search(token))


def word_positions(tokens: list[str]) -> list[tuple[int, str]]:
    """``(index, token)`` for the word tokens of a :func:`tokenize` list."""
    return [(i, t) for i, t in enumerate(tokens) if is_word(t)]


def words(text: str) -> list[str]:
    """Lower-cased word tokens of ``text`` (punctuation dropped); used for diffs and Jaccard.

    >>> words("Women don't know how to drive.")
    ['women', "don't", 'know', 'how', 'to', 'drive']
    """
    return [t.lower() for t in tokenize(text) if is_word(t)]


def whitespace_words(text: str) -> list[str]:
    """Whitespace-separated words (``str.split()``), the unit of the word-count statistics."""
    return text.split()


def split_clitic(token: str) -> tuple[str, str]:
    """Split an English clitic (``'s 'd 'll 're 've 'm``) off a word: ``("man", "'s")``.

    >>> split_clitic("mother's"), split_clitic("he'd"), split_clitic("ma'am")
    (('mother', "'s"), ('he', "'d"), ("ma'am", ''))
    """
    m = CLITIC_RE.match(token)
    if not m:
        return token, ""
    return m.group("base"), m.group("clitic")


def match_case(word: str, model: str) -> str:
    """``word`` with the capitalisation pattern of ``model`` (lower, Title or UPPER).

    >>> match_case("girls", "BOYS"), match_case("her", "His"), match_case("ma'am", "sir")
    ('GIRLS', 'Her', "ma'am")
    """
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word.lower()


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the sets of :func:`words` of two texts (1.0 for two empty texts).

    >>> round(jaccard("The mother is kind.", "The father is kind."), 4)
    0.6
    """
    sa, sb = set(words(a)), set(words(b))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)
