"""Negation perturbations: options that differ only by a negation state one stereotype twice.

"Women don't know how to drive." / "Men know how to drive.": both instances are judged on the
plain sentence's predicate (agent nouns tried: drive -> driver), by
:func:`stereoset_eval.curation.validity.judge_negation`. Split out of :mod:`.validity`.
"""

from __future__ import annotations

from typing import Sequence


# the words a negation perturbation adds or removes ("do" comes with "don't" splits, "tend not to")
NEGATORS = frozenset("not n't no never don't doesn't didn't can't cannot won't isn't aren't wasn't weren't "
                     "do does did".split())


def is_negation_pair(attribute_words: Sequence[Sequence[str]]) -> bool:
    """True if the options' differing words (one list per side) are only negation words.

    >>> is_negation_pair([[], ["don't"]]), is_negation_pair([["not"], []]), is_negation_pair([["kind"], ["not"]])
    (True, True, False)
    """
    words = {w.lower() for side in attribute_words for w in side}
    return bool(words) and words <= NEGATORS


def agent_nouns(word: str) -> list[str]:
    """``drive`` → ``driver``, ``shoot`` → ``shooter``: the doer of a verb (for occupation lists)."""
    w = word.lower()
    return [w + "r"] if w.endswith("e") else [w + "er"]


def predicate_words(text: str) -> list[str]:
    """The content words of ``text``: not gendered, not a name, not closed-class, not a negator."""
    from stereoset_eval.curation.dimensions import context_words
    from stereoset_eval.curation.lexicon import function_words as fw

    closed = fw.DETERMINERS | fw.PREPOSITIONS | fw.CONJUNCTIONS | fw.PRONOUNS | fw.AUXILIARIES | fw.ADVERBS
    return [w.lower() for w in context_words(text) if w.lower() not in closed and w.lower() not in NEGATORS
            and w.lower() not in ("tend", "tends", "know", "knows", "how")]


