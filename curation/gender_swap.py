"""Gender swap of a sentence or item, with every token edit recorded and reversible.

The transform (what changes) is kept apart from the constraints (what may change, passed
as ``protect``: token indices that must stay, e.g. the stereotyped attribute) and from the
lexicon (what a word becomes, :mod:`stereoset_eval.curation.lexicon`). Like TextAttack's
``replace_word_at_index``, each change is an :class:`~stereoset_eval.foundation.items.Edit` ``(index, old,
new)`` over the lossless :func:`stereoset_eval.curation.text.tokenize` list, so :func:`revert_edits`
rebuilds the original sentence exactly.

Context-dependent words: ``her`` becomes ``his`` (possessive determiner) or ``him``
(object pronoun) and ``his`` becomes ``her`` or ``hers``, decided from the next words
(:func:`resolve_her`); each decision is recorded with its reason and whether it was certain.
Given names are never swapped: they are reported in ``SwapResult.names_left``.
Capitalisation is kept (``Schoolgirls`` → ``Schoolboys``, ``HE`` → ``SHE``), clitics too
(``he'd`` → ``she'd``, ``mother's`` → ``father's``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from stereoset_eval.foundation.items import Edit, Flag, Item, Provenance, Sentence
from stereoset_eval.curation.lexicon import SWAPS, name_gender
from stereoset_eval.curation.lexicon import dimension_terms as dt
from stereoset_eval.curation.lexicon import function_words as fw
from stereoset_eval.curation.lexicon.gender_terms import AMBIGUOUS
from stereoset_eval.curation.text import is_word, match_case, split_clitic, tokenize

ADJECTIVES = (dt.PERSONALITY_TRAITS | dt.PHYSICAL_CHARACTERISTICS | fw.COMMON_ADJECTIVES) - dt.NOUNS
# base verbs / closed-class words that are also common nouns after a possessive
NOUN_LIKE_CUES = frozenset("back home like work fall play walk change run smile laugh drink help stand wait win".split())
HERS_CUES = frozenset("and or but than too as is was".split())


@dataclass(frozen=True)
class SwapDecision:
    """How one context-dependent word was swapped, and whether the cue was certain."""

    index: int
    old: str
    new: str
    certain: bool
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"index": self.index, "old": self.old, "new": self.new, "certain": self.certain, "reason": self.reason}


@dataclass(frozen=True)
class SwapResult:
    """A swapped sentence with its edits, context decisions and the names left alone."""

    text: str
    edits: tuple[Edit, ...]
    decisions: tuple[SwapDecision, ...]
    names_left: tuple[tuple[int, str, str | None], ...]

    @property
    def changed(self) -> bool:
        return bool(self.edits)

    @property
    def uncertain(self) -> tuple[SwapDecision, ...]:
        return tuple(d for d in self.decisions if not d.certain)


def next_words(tokens: list[str], index: int, n: int = 2) -> list[str | None]:
    """The ``n`` lower-cased words after ``tokens[index]``; None from a punctuation mark on."""
    out: list[str | None] = []
    for tok in tokens[index + 1:]:
        if len(out) == n:
            break
        if tok.isspace():
            continue
        if not is_word(tok):
            break
        out.append(tok.lower())
    return out + [None] * (n - len(out))


def resolve_her(next1: str | None, next2: str | None) -> tuple[str, bool, str]:
    """``(counterpart, certain, reason)`` for ``her`` followed by ``next1 next2``.

    >>> resolve_her("mother", None)[0], resolve_her("to", "go")[0], resolve_her(None, None)[0]
    ('his', 'him', 'him')
    >>> resolve_her("sick", None)[:2], resolve_her("crying", "daughter")[:2]
    (('him', True), ('his', False))
    """
    if next1 is None:
        return "him", True, "clause ends after 'her': object pronoun"
    if next1 in fw.POSSESSIVE_CUES:
        return "his", True, f"{next1!r} follows: possessive determiner"
    if next1 in fw.OBJECT_CUES:
        return "him", next1 not in NOUN_LIKE_CUES, f"closed-class word {next1!r} follows: object pronoun"
    if next1 in fw.BASE_VERBS:
        return "him", next1 not in NOUN_LIKE_CUES, f"base verb {next1!r} follows: object pronoun"
    if next1.endswith("ly") and next1 not in fw.LY_NON_ADVERBS:
        return "him", True, f"adverb {next1!r} follows: object pronoun"
    participle = next1.endswith(("ing", "ed"))
    if next1 in ADJECTIVES or participle:
        kind = "participle" if participle and next1 not in ADJECTIVES else "adjective"
        if next2 is None or next2 in fw.OBJECT_CUES:
            return "him", not participle, f"{kind} {next1!r} ends the phrase: object + complement"
        return "his", not participle, f"{kind} {next1!r} before {next2!r}: possessive determiner"
    return "his", True, f"open-class word {next1!r} follows: possessive determiner"


def resolve_his(next1: str | None) -> tuple[str, bool, str]:
    """``(counterpart, certain, reason)`` for ``his``: ``hers`` when it stands alone."""
    if next1 is None or next1 in HERS_CUES:
        return "hers", True, "'his' stands alone: independent possessive"
    return "her", True, "'his' determines a noun: possessive determiner"


def swap_gender(text: str, *, role: str = "sent_less", protect: frozenset[int] = frozenset(),
                names: Mapping[str, str] | None = None) -> SwapResult:
    """Swap every gendered word of ``text`` except tokens at ``protect`` indices and names.

    ``names`` (lower-case name → counterpart) swaps the given names it lists (the source pair's
    own counterpart or a lexicon counterpart, chosen by the caller); other names are left alone

    Args:
        text: the sentence.
        role: sentence role written into the :class:`Edit` records.
        protect: token indices (of :func:`tokenize`) that must not change.

    >>> swap_gender("She told her mother about herself.").text
    'He told his father about himself.'
    >>> swap_gender("Schoolgirls like Mr. Smith's sons.").text
    "Schoolboys like Mrs. Smith's daughters."
    """
    tokens = tokenize(text)
    edits: list[Edit] = []
    decisions: list[SwapDecision] = []
    names_left: list[tuple[int, str, str | None]] = []
    name_map = {k.lower(): v for k, v in (names or {}).items()}
    for i, tok in enumerate(tokens):
        if not is_word(tok) or i in protect:
            continue
        base, clitic = split_clitic(tok)
        low = base.lower()
        if low in AMBIGUOUS:
            n1, n2 = next_words(tokens, i)
            if clitic:
                n1, n2 = None, None
            new, certain, reason = resolve_her(n1, n2) if low == "her" else resolve_his(n1)
            decisions.append(SwapDecision(i, tok, match_case(new, base) + clitic, certain, reason))
        elif low in SWAPS:
            new = SWAPS[low]
        else:
            if name_map and low in name_map:
                new = name_map[low]
            else:
                is_name, gender = name_gender(base)
                if is_name:
                    names_left.append((i, tok, gender))
                continue
        new_tok = match_case(new, base) + clitic
        if new_tok != tok:
            edits.append(Edit(sentence_role=role, index=i, old=tok, new=new_tok))
            tokens[i] = new_tok
    return SwapResult("".join(tokens), tuple(edits), tuple(decisions), tuple(names_left))


def _replay(text: str, edits: tuple[Edit, ...] | list[Edit], role: str, *, reverse: bool) -> str:
    tokens = tokenize(text)
    for e in (reversed(edits) if reverse else edits):
        if e.sentence_role != role:
            continue
        expect, put = (e.new, e.old) if reverse else (e.old, e.new)
        if expect == "" and e.index == len(tokens):  # a token added at the end, or one emptied there
            tokens.append(put)
            continue
        if e.index >= len(tokens) or tokens[e.index] != expect:
            found = tokens[e.index] if e.index < len(tokens) else "<end of sentence>"
            raise ValueError(f"edit at token {e.index} expects {expect!r} but the sentence has {found!r}: {text!r}")
        tokens[e.index] = put
    return "".join(tokens)


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit], role: str) -> str:
    """Apply the ``role`` edits to ``text`` (each token must read ``old``)."""
    return _replay(text, edits, role, reverse=False)


def revert_edits(text: str, edits: tuple[Edit, ...] | list[Edit], role: str) -> str:
    """Undo the ``role`` edits on an edited ``text``: the original sentence, exactly.

    >>> r = swap_gender("He asked her to go.")
    >>> r.text, revert_edits(r.text, r.edits, "sent_less")
    ('She asked him to go.', 'He asked her to go.')
    """
    return _replay(text, edits, role, reverse=True)


def original_text(item: Item, role: str) -> tuple[str, str]:
    """``(parent_role, parent_text)``: the parent sentence ``item``'s ``role`` was made from."""
    origins = dict(item.provenance.sentence_origins)
    return origins.get(role, role), revert_edits(item.text(role), item.provenance.edits, role)


def swap_flags(item_id: str, result: SwapResult, role: str) -> list[Flag]:
    """Flags recording names left alone and uncertain context decisions of one swap."""
    flags: list[Flag] = []
    if result.names_left:
        flags.append(Flag(
            "name_left_alone", item_id, "info",
            f"given name(s) not swapped in {role}: {', '.join(n for _, n, _ in result.names_left)}",
            {"role": role, "names": [{"index": i, "name": n, "gender": g} for i, n, g in result.names_left]},
        ))
    if result.uncertain:
        flags.append(Flag(
            "ambiguous_swap", item_id, "info",
            f"context decision(s) in {role} not certain: "
            + "; ".join(f"{d.old}->{d.new} ({d.reason})" for d in result.uncertain),
            {"role": role, "decisions": [d.to_dict() for d in result.uncertain]},
        ))
    return flags


def swap_item(item: Item, *, suffix: str = "~swap") -> Item:
    """A new item with every sentence gender-swapped; provenance records each edit.

    The new id is ``item.id + suffix``; ``derived_from`` is ``item.id``; names left alone
    and uncertain decisions become ``info`` flags.
    """
    new_id = item.id + suffix
    sentences: list[Sentence] = []
    edits: list[Edit] = []
    flags: list[Flag] = []
    for s in item.sentences:
        r = swap_gender(s.text, role=s.role)
        sentences.append(Sentence(id=f"{new_id}:{s.role}", text=r.text, role=s.role))
        edits.extend(r.edits)
        flags.extend(swap_flags(new_id, r, s.role))
    prov = Provenance(
        source_file=item.provenance.source_file, sha256=item.provenance.sha256, row=item.provenance.row,
        format=item.provenance.format, format_version=item.provenance.format_version,
        derived_from=item.id, edits=tuple(edits),
        sentence_origins=tuple((s.role, s.role) for s in item.sentences),
    )
    return item.replace(id=new_id, sentences=tuple(sentences), provenance=prov, flags=tuple(flags))
