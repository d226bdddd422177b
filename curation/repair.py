"""Minimal repairs of curated sentences, every one recorded as a token edit.

The paper's minimal intervention: "fix only clear typos, a lowercase 'i', broken agreement, or a
name written in lower case". Each repair replaces one token by one token (so the edits stay
reversible, :func:`stereoset_eval.curation.gender_swap.revert_edits`) and is added to the
instance's provenance edits plus one ``repair`` flag listing them:

* ``lowercase_i`` — ``i`` / ``i'm`` / ``i'd`` … → ``I`` / ``I'm`` …
* ``typo`` — a lower-case word unknown to the spell-checking dictionary (pyspellchecker's English
  word list) and to VADER's lexicon (informal words such as "naggy") whose best correction is one
  edit away (insertion, deletion, substitution or swap), keeps the first letter and the word has at
  least ``min_typo_letters`` letters. Nothing else is touched (slang such as "artsy" is in the
  dictionary; "mudding" → "pudding" changes the first letter and is refused); two corrections of
  similar frequency ("decore": decode / decor) are refused, a plural or possessive without
  apostrophe ("womans") is left, a contraction without apostrophe gets it ("wasnt" → "wasn't").
* ``article`` — ``a`` before a word starting with a vowel letter → ``an`` (``a immature`` →
  ``an immature``), except words read with a consonant sound (``a university``, ``a one``).
* ``plural_apostrophe`` — a noun with ``'s`` before a verb that agrees only with a plural
  (``have``, ``are``, ``were``, ``do``): the plural without apostrophe ("All great mother's
  have" → "mothers").
* ``whitespace`` — a run of spaces inside the sentence → one space.
* ``sentence_case`` — the first word of the sentence in lower case → capitalised ("women tend
  to love smoothies" → "Women …"; gendered words and names included).
* ``double_period`` — a sentence ending in ".." → "." (the second full stop is emptied).
* ``final_punctuation`` — of the two sentences of a pair, one ends with ``.``/``!``/``?`` and the
  other with none: the other gets the same mark (the pair must differ only by gendered terms).
* ``name_case`` — a lower-case given name of the name lexicon that is rare as a common word
  (dictionary frequency under ``name_max_frequency``: "mark", "bill", "grace" stay) and not
  after an article ("a frank talk") → capitalised (``paula`` → ``Paula``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from stereoset_eval.curation.lexicon import GENDER_OF, NAME_GENDER
from stereoset_eval.curation.lexicon.sentiment import vader_lexicon
from stereoset_eval.curation.spans import edit_distance
from stereoset_eval.curation.text import is_word, match_case, split_clitic, tokenize
from stereoset_eval.foundation.items import Edit, Flag, Item

REPAIR_KINDS: tuple[str, ...] = ("lowercase_i", "typo", "article", "name_case", "whitespace", "plural_apostrophe",
                                  "sentence_case", "double_period", "final_punctuation")
CONTRACTIONS = frozenset("don't doesn't didn't isn't wasn't aren't weren't can't couldn't shouldn't wouldn't "
                         "won't hasn't haven't hadn't mustn't".split())
AMBIGUITY_RATIO = 5.0
# verbs that agree only with a plural subject: "All great mother's have" is the plural "mothers"
PLURAL_VERBS = frozenset("have are were do don't".split())
CONSONANT_SOUND_STARTS: tuple[str, ...] = ("uni", "use", "usu", "uti", "ure", "eu", "one", "once", "ewe")


@dataclass(frozen=True)
class RepairConfig:
    """Which repairs run and their thresholds (recorded in provenance)."""

    enabled: bool = True
    min_typo_letters: int = 5
    name_max_frequency: float = 1e-5

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@lru_cache(maxsize=1)
def _speller():
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1)


def typo_correction(word: str, *, min_letters: int = 5) -> str | None:
    """The dictionary correction of a lower-case out-of-vocabulary ``word``, or None.

    >>> typo_correction("compasionate"), typo_correction("villian"), typo_correction("mudding")
    ('compassionate', 'villain', None)
    >>> typo_correction("caring"), typo_correction("Paula")
    (None, None)
    """
    if word.endswith("nt") and word[:-2] + "n't" in CONTRACTIONS:
        return word[:-2] + "n't"
    if len(word) < min_letters or not word.isalpha() or not word.islower() or word in GENDER_OF:
        return None
    sp = _speller()
    if word in sp or word in vader_lexicon():  # VADER lists informal words the dictionary lacks ("naggy")
        return None
    if word.endswith("s") and word[:-1] in sp:
        return None  # a plural or a possessive without apostrophe, not a misspelling
    ranked = sorted(((sp.word_usage_frequency(c), c) for c in (sp.candidates(word) or ())
                     if c != word and c[:1] == word[:1]), reverse=True)
    if not ranked:
        return None
    fix = ranked[0][1]
    if fix[0] != word[0] or edit_distance(word, fix) != 1:
        return None
    if len(ranked) > 1 and ranked[0][0] < AMBIGUITY_RATIO * ranked[1][0]:
        return None  # two plausible corrections ("decore": decode or decor): a person decides
    return fix


def _next_word(tokens: list[str], i: int) -> str | None:
    for t in tokens[i + 1:]:
        if t.isspace():
            continue
        return t if is_word(t) else None
    return None


def _after_determiner(tokens: list[str], i: int) -> bool:
    """True if the word before ``tokens[i]`` is an article ("a frank talk", "the dean"): not a name."""
    for t in reversed(tokens[:i]):
        if t.isspace():
            continue
        return t.lower() in ("a", "an", "the")
    return False


def is_lowercase_name(tokens: list[str], i: int, config: RepairConfig = RepairConfig()) -> bool:
    """True if ``tokens[i]`` is a lower-case given name the ``name_case`` repair capitalises."""
    base = split_clitic(tokens[i])[0]
    return (base.islower() and NAME_GENDER.get(base) is not None and not _after_determiner(tokens, i)
            and _speller().word_usage_frequency(base) < config.name_max_frequency)


def repair_tokens(tokens: list[str], config: RepairConfig = RepairConfig()) -> list[tuple[int, str, str, str]]:
    """``(index, old, new, kind)`` for every repair of a token list (not applied)."""
    out = []
    words = [i for i, t in enumerate(tokens) if is_word(t)]
    first = words[0] if words else None
    if len(tokens) >= 2 and tokens[-1] == "." and tokens[-2] == "." and (len(tokens) < 3 or tokens[-3] != "."):
        out.append((len(tokens) - 1, ".", "", "double_period"))
    for i, tok in enumerate(tokens):
        if tok.isspace() and tok != " " and 0 < i < len(tokens) - 1 and "\n" not in tok:
            out.append((i, tok, " ", "whitespace"))
            continue
        if not is_word(tok):
            continue
        base, clitic = split_clitic(tok)
        if base == "i":
            out.append((i, tok, "I" + clitic, "lowercase_i"))
            continue
        if i == first and base[:1].islower() and base.isalpha():
            fixed = typo_correction(base, min_letters=config.min_typo_letters) or base
            out.append((i, tok, fixed[:1].upper() + fixed[1:] + clitic, "sentence_case"))
            continue
        if tok.lower() == "a" and tok in ("a", "A"):
            nxt = _next_word(tokens, i)
            if nxt and nxt[:1].lower() in "aeiou" and not nxt.lower().startswith(CONSONANT_SOUND_STARTS):
                out.append((i, tok, tok + "n", "article"))
            continue
        if is_lowercase_name(tokens, i, config):
            out.append((i, tok, base.capitalize() + clitic, "name_case"))
            continue
        nxt = _next_word(tokens, i)
        if clitic == "'s" and nxt and nxt.lower() in PLURAL_VERBS and base.isalpha() and len(base) > 2:
            out.append((i, tok, base + "s", "plural_apostrophe"))
            continue
        fix = typo_correction(base, min_letters=config.min_typo_letters)
        if fix:
            out.append((i, tok, match_case(fix, base) + clitic, "typo"))
    return out


def repair_item(item: Item, config: RepairConfig = RepairConfig()) -> Item:
    """``item`` with its sentences repaired, the edits appended to provenance and one flag."""
    if not config.enabled:
        return item
    sentences, edits, done = [], list(item.provenance.edits), []
    for s in item.sentences:
        tokens = tokenize(s.text)
        for i, old, new, kind in repair_tokens(tokens, config):
            tokens[i] = new
            edits.append(Edit(sentence_role=s.role, index=i, old=old, new=new))
            done.append({"role": s.role, "index": i, "old": old, "new": new, "kind": kind})
        sentences.append(s.__class__(s.id, "".join(tokens), s.role))
    ends = [t.text.rstrip()[-1:] for t in sentences]
    if len(sentences) == 2 and sum(e in ".!?" and e != "" for e in ends) == 1:
        k = 0 if ends[1] in ".!?" and ends[1] else 1
        s = sentences[k]
        tokens = tokenize(s.text)
        if tokens and not tokens[-1].isspace():
            edits.append(Edit(sentence_role=s.role, index=len(tokens), old="", new=ends[1 - k]))
            done.append({"role": s.role, "index": len(tokens), "old": "", "new": ends[1 - k], "kind": "final_punctuation"})
            sentences[k] = s.__class__(s.id, s.text + ends[1 - k], s.role)
    if not done:
        return item
    from dataclasses import replace as dc_replace

    flag = Flag("repair", item.id, "info",
                "repaired: " + ", ".join(f"{d['old']}->{d['new']} ({d['kind']})" for d in done), {"repairs": done})
    return item.replace(sentences=tuple(sentences), provenance=dc_replace(item.provenance, edits=tuple(edits)),
                        flags=tuple(item.flags) + (flag,))
