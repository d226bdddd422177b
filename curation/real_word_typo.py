"""Real-word typos in CrowS-Pairs gender swaps: one non-gender word pair that is a slip, not an attribute.

A CrowS-Pairs writer copied one sentence to write the other and changed the gender; a slip of
the keys in one copy leaves a second difference that a spelling dictionary cannot see, because
both spellings are words ("Jim *to* Drew to back off …" / "Susan *told* Drew to back off …",
"… she poured *our* her feelings" / "… he poured *out* his feelings"). Read as an attribute
perturbation, such a pair is split into two meaningless instances ("to" vs "told"); it is an
as-is gender swap with a typo.

:func:`find_real_word_typo` recognises the case — the pair swaps gender, and otherwise differs by
exactly one word on each side, both dictionary words (pyspellchecker's English list), not a
negation, with the same first letter and one a near edit of the other: a *truncation* (one is a
proper prefix of the other, at most ``max_truncation`` letters shorter) or one substitution /
insertion / deletion / adjacent swap (Damerau 1964: the four single-error kinds of most typing
slips). It then decides which spelling was meant, mechanically or not at all:

* ``truncation`` — the longer word (a dropped ending is a slip; adding letters that happen to
  make another word is not): "to" → "told". Confidence 0.6.
* ``closed_class_sequence`` — exactly one of the two readings puts a possessive determiner
  (my your his its our their) directly before a determiner, which English grammar does not
  allow ("poured our her feelings"): the other reading. Confidence 0.8.
* otherwise the pair is a typo the rules cannot repair: :class:`TypoFinding` with ``fix`` None,
  and the pair goes to review (``real_word_typo``) with both readings.

The repair replaces one token in one sentence and is recorded as an :class:`Edit`; the pair
then becomes a pure gender swap and is normalised as one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stereoset_eval.curation.lexicon import function_words as fw
from stereoset_eval.curation.spans import PairAnalysis, edit_distance, is_affix_antonym
from stereoset_eval.curation.text import tokenize

# possessive determiners that cannot stand before another determiner ("our her", "his the");
# "her" is left out: as an object pronoun it precedes determiners ("gave her the book")
POSSESSIVE_DETERMINERS = frozenset("my your his its our their".split())
NEGATION_WORDS = frozenset("not no never n't nor".split())
MAX_TRUNCATION = 3


@dataclass(frozen=True)
class TypoFix:
    """Replace token ``index`` of ``role`` (``old``) by ``new``; ``kind`` says how it was decided."""

    role: str
    index: int
    old: str
    new: str
    kind: str
    confidence: float


@dataclass(frozen=True)
class TypoFinding:
    """A real-word typo pair (``more_word`` / ``less_word``) and its fix, None when undecidable."""

    more_word: str
    less_word: str
    fix: TypoFix | None

    def evidence(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sent_more_word": self.more_word, "sent_less_word": self.less_word}
        if self.fix is not None:
            out.update({"role": self.fix.role, "index": self.fix.index, "old": self.fix.old, "new": self.fix.new,
                        "kind": self.fix.kind, "confidence": self.fix.confidence})
        return out


def _in_dictionary(word: str) -> bool:
    from stereoset_eval.curation.repair import _speller

    return bool(_speller().known([word]))


def near_edit(a: str, b: str, *, max_truncation: int = MAX_TRUNCATION) -> str | None:
    """``truncation`` / ``edit`` when ``a`` and ``b`` (lower case) are a slip of each other, else None.

    >>> near_edit("to", "told"), near_edit("our", "out"), near_edit("pretending", "acting")
    ('truncation', 'edit', None)
    >>> near_edit("caring", "uncaring"), near_edit("bad", "sad"), near_edit("was", "wasn't")
    (None, None, None)
    """
    if a == b or not (a.isalpha() and b.isalpha()) or a[0] != b[0]:
        return None
    if a in NEGATION_WORDS or b in NEGATION_WORDS:
        return None
    if is_affix_antonym(a, b):
        return None
    short, long_ = sorted((a, b), key=len)
    if len(short) >= 2 and long_.startswith(short) and len(long_) - len(short) <= max_truncation:
        return "truncation"
    if min(len(a), len(b)) >= 3 and edit_distance(a, b) == 1:
        return "edit"
    return None


def _ungrammatical(tokens: list[str], index: int, word: str) -> bool:
    """``word`` at ``tokens[index]`` would stand in a possessive-determiner + determiner sequence."""
    words = [(i, t.lower()) for i, t in enumerate(tokens) if t.strip() and t[0].isalnum()]
    pos = [k for k, (i, _) in enumerate(words) if i == index]
    if not pos:
        return False
    k = pos[0]
    seq = [w for _, w in words]
    seq[k] = word
    before = seq[k - 1] if k > 0 else ""
    after = seq[k + 1] if k + 1 < len(seq) else ""
    return (word in POSSESSIVE_DETERMINERS and after in fw.DETERMINERS) or \
        (before in POSSESSIVE_DETERMINERS and word in fw.DETERMINERS)


def find_real_word_typo(analysis: PairAnalysis, *, max_truncation: int = MAX_TRUNCATION) -> TypoFinding | None:
    """The real-word typo of a gender-swap pair (see the module doc), or None when it has none."""
    if not analysis.of_kind("group", "mixed") or analysis.of_kind("other_group", "mismatch"):
        return None
    more_idx, less_idx = sorted(analysis.attribute_indices("more")), sorted(analysis.attribute_indices("less"))
    if len(more_idx) != 1 or len(less_idx) != 1:
        return None
    mt, lt = list(analysis.more_tokens), list(analysis.less_tokens)
    a, b = mt[more_idx[0]], lt[less_idx[0]]
    if not (a.islower() and b.islower()):
        return None
    kind = near_edit(a, b, max_truncation=max_truncation)
    if kind is None or not (_in_dictionary(a) and _in_dictionary(b)):
        return None
    if kind == "truncation":
        if len(a) < len(b):
            return TypoFinding(a, b, TypoFix("sent_more", more_idx[0], a, b, "truncation", 0.6))
        return TypoFinding(a, b, TypoFix("sent_less", less_idx[0], b, a, "truncation", 0.6))
    bad_a = _ungrammatical(mt, more_idx[0], a) or _ungrammatical(lt, less_idx[0], a)
    bad_b = _ungrammatical(mt, more_idx[0], b) or _ungrammatical(lt, less_idx[0], b)
    if bad_a and not bad_b:
        return TypoFinding(a, b, TypoFix("sent_more", more_idx[0], a, b, "closed_class_sequence", 0.8))
    if bad_b and not bad_a:
        return TypoFinding(a, b, TypoFix("sent_less", less_idx[0], b, a, "closed_class_sequence", 0.8))
    return TypoFinding(a, b, None)


def apply_fix(text: str, fix: TypoFix) -> str:
    """``text`` with token ``fix.index`` replaced by ``fix.new`` (the tokenisation is lossless)."""
    tokens = tokenize(text)
    if tokens[fix.index] != fix.old:
        raise ValueError(f"token {fix.index} of {text!r} is {tokens[fix.index]!r}, not {fix.old!r}")
    tokens[fix.index] = fix.new
    return "".join(tokens)
