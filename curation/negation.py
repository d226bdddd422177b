"""Negation perturbations: options that differ only by a negation state one stereotype twice.

"Women don't know how to drive." / "Men know how to drive.": both instances are judged on the
plain sentence's predicate (agent nouns tried: drive -> driver); the negated mirror needs direct
evidence (rules 2.2). Split out of :mod:`.validity`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from stereoset_eval.curation.consensus import Consensus
from stereoset_eval.curation.lexicon.gender_association import lexicon_hits
from stereoset_eval.curation.validity_evidence import ValidityConfig, associate

if TYPE_CHECKING:
    from stereoset_eval.curation.validity import Verdict


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
    from stereoset_eval.curation.validity import Verdict, judge

    words = predicate_words(text)
    probe = words + [a for w in words for a in agent_nouns(w) if lexicon_hits(a)]
    v = judge(probe, claimed, "m", consensus=consensus, exclude=exclude, config=config)
    ev = {**v.evidence, "words": words, "negation_perturbation": True, "mirror": mirror}
    no_evidence = v.rule == "stereotype_validity" and v.confidence <= 0.4
    if no_evidence and mirror:
        return Verdict("review", "negation_perturbation", 0.3,
                       f"negation perturbation: the predicate {' '.join(words)!r} has no gender evidence", ev)
    if no_evidence:
        return Verdict("keep", "stereotype_validity", 0.4,
                       f"negation perturbation: the predicate {' '.join(words)!r} has no gender evidence; "
                       "the source's stereotype sentence keeps its label", ev)
    if mirror and v.action in ("keep", "swap"):
        a = associate(probe, consensus, exclude=exclude, config=config)
        if a.gender is not None and a.chosen_for(a.gender) < config.min_chosen:
            return Verdict("review", "negation_perturbation", round(min(v.confidence, 0.35), 3),
                           f"negation perturbation: the predicate {' '.join(words)!r} is associated with "
                           f"{a.gender} only by context uses; whether the negated mirror is a stereotype "
                           "in its own right, a person decides", ev)
    return Verdict(v.action, v.rule, v.confidence, "negation perturbation: " + v.reason, ev)
