"""Encodings of a masked context with a few word pieces before the mask, spliced, not re-encoded.

StereoSet's masked-LM scoring encodes, for every piece ``i`` of an attribute word,
``before + prefix_i + mask + after`` (the context with ``BLANK`` replaced). For two tokenizer
families the ids of such a text are, provably, the ids of ``before + mask + after`` with the ids of
one short text put right before the mask:

* **WordPiece with BERT's normaliser and pre-tokeniser** (BERT, DistilBERT, ...): the text is cut
  at the mask (an added token, matched first), each side is normalised char by char (for ASCII:
  control characters removed, case folded) and split on whitespace and at every punctuation
  character, then each word is encoded alone. When ``before`` is empty or ends with a space or an
  ASCII punctuation character, no word spans ``before | prefix``: the ids are ``ids(before) +
  ids(prefix) + [mask] + ids(after)``. The short text is the prefix.
* **Byte-level BPE without a prefix space** (RoBERTa, ...) whose mask token strips the
  whitespace on its left (``lstrip``): with ``before = X + W`` (``W`` the trailing spaces, ``X``
  empty or ending in a non-whitespace character), the mask takes ``W`` when nothing is between,
  so ``before + mask`` encodes as ``ids(X) + [mask]``. With a prefix that does not end in
  whitespace, the left side is ``X + W + prefix``; GPT-2's split pattern never matches across the
  whitespace that follows a non-whitespace character (a space only ever starts a match), so it
  splits into ``X``'s words, then ``W + prefix``'s, each encoded alone. The short text is ``W + prefix``.

Both need the Rust pipeline to be what runs (:meth:`TokenizerView.direct_backend`), an exact
configuration read from the tokenizer (anything else: no splicing), a mask no other added token
can overlap, and no added token's content in ``before + prefix`` (which could cut it elsewhere).
Where any condition fails, the caller encodes the whole text. ``tests/test_mask_splice.py`` checks the splices against whole encodings on
every StereoSet dev context and on random texts built to break them.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from typing import Any, Sequence

from stereoset_eval.scoring.tokenization import TokenizerView

WORDPIECE = "wordpiece"
BYTE_LEVEL = "byte-level"
_WORD_ENDS = frozenset(" " + string.punctuation)  # BERT's pre-tokeniser splits after each, for ASCII
_CONTRACTIONS = frozenset({"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"})
_POST_PROCESSORS = frozenset({"BertProcessing", "RobertaProcessing", "TemplateProcessing", "ByteLevel"})


@dataclass(frozen=True)
class SpliceRule:
    """Which of the two arguments applies to a tokenizer, and the contents of its added tokens."""

    kind: str
    added: tuple[str, ...]  # every added token's content, as written and lower-cased
    # made from ``added``: a pattern finding any of them, and each one's splits across ``before | prefix``
    # as (its part in before, its part in the prefix), by the last character of its part in before
    # (before's last character picks the few to check)
    _pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _across: dict[str, list[tuple[str, str]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        across: dict[str, list[tuple[str, str]]] = {}
        for content in self.added:
            for k in range(1, len(content)):
                across.setdefault(content[k - 1], []).append((content[:k], content[k:]))
        object.__setattr__(self, "_pattern", re.compile("|".join(map(re.escape, self.added))) if self.added else None)
        object.__setattr__(self, "_across", across)

    def splice_texts(self, parts: Sequence[tuple[str, str]]) -> list[str | None]:
        """Per ``(before, prefix)``: the text whose ids (without special tokens) go right before the
        mask in the encoding of ``before + mask + after`` to make the encoding of ``before + prefix +
        mask + after`` (for any ``after``), or None where that is not certain (encode that text whole).
        The conditions on ``before`` and on ``prefix`` are checked once per distinct one."""
        leads: dict[str, str | None] = {}
        fits: dict[str, bool] = {}
        across = self._across
        out: list[str | None] = []
        for before, prefix in parts:
            if before not in leads:  # None is an answer here, so membership, not get
                leads[before] = self._lead(before)
            lead = leads[before]
            fit = fits.get(prefix)
            if fit is None:
                fit = fits[prefix] = self._fits(prefix)
            if lead is None or not fit:
                out.append(None)
            elif before and (spans := across.get(before[-1])) and any(
                    before.endswith(a) and prefix.startswith(b) for a, b in spans):
                out.append(None)  # an added token's content would run across the two
            else:
                out.append(lead + prefix)
        return out

    def _clean(self, text: str) -> bool:
        """No added token's content in ``text``."""
        return self._pattern is None or self._pattern.search(text) is None

    def _lead(self, before: str) -> str | None:
        """What goes before the prefix in the short text (WordPiece: nothing; byte-level: ``before``'s
        trailing spaces), or None where ``before`` does not end as the argument needs."""
        if not self._clean(before):
            return None
        if self.kind == WORDPIECE:
            return "" if before.isascii() and (not before or before[-1] in _WORD_ENDS) else None
        x = before.rstrip(" ")
        if x and (x[-1].isspace() or x == before):
            return None  # spaces not only ' ', or no space before the prefix
        return before[len(x):]

    def _fits(self, prefix: str) -> bool:
        """Whether a prefix can be spliced (WordPiece: ASCII; byte-level: not ending in whitespace,
        which the mask would strip)."""
        if not prefix or not self._clean(prefix):
            return False
        return prefix.isascii() if self.kind == WORDPIECE else not prefix[-1].isspace()


def splice_rule(tok: TokenizerView) -> SpliceRule | None:
    """The tokenizer's :class:`SpliceRule` (looked up once per view), or None if neither argument applies."""
    return tok.fact("mask_splice", lambda: _rule_of(tok) if tok.direct_backend() is not None else None)


def _rule_of(tok: TokenizerView) -> SpliceRule | None:
    backend = getattr(tok.tokenizer, "backend_tokenizer", None)
    mask = getattr(tok.tokenizer, "mask_token", None)
    if backend is None or mask is None:
        return None
    spec = json.loads(backend.to_str())
    added = spec.get("added_tokens") or []
    mask_entry = next((t for t in added if t.get("content") == str(mask)), None)
    if mask_entry is None or mask_entry.get("single_word") or mask_entry.get("normalized") \
            or not mask_entry.get("special"):
        return None
    content = str(mask_entry["content"])
    if not _plain_post_processor(spec.get("post_processor")):
        return None
    contents = tuple(dict.fromkeys(c for t in added for c in (str(t["content"]), str(t["content"]).lower())))
    if not _mask_stands_alone(content, contents):
        return None
    model, normalizer, pre = spec.get("model") or {}, spec.get("normalizer"), spec.get("pre_tokenizer") or {}
    if (model.get("type") == "WordPiece" and (normalizer or {}).get("type") == "BertNormalizer"
            and pre.get("type") == "BertPreTokenizer" and _split_by_bert(content)):
        return SpliceRule(WORDPIECE, contents)
    if (model.get("type") == "BPE" and not model.get("dropout") and normalizer is None
            and pre.get("type") == "ByteLevel" and pre.get("add_prefix_space") is False
            and pre.get("use_regex", True) is True and mask_entry.get("lstrip") is True
            and _split_by_gpt2_pattern(content)):
        return SpliceRule(BYTE_LEVEL, contents)
    return None


def _mask_stands_alone(mask: str, contents: Sequence[str]) -> bool:
    """True if no other added token's content can take the mask's place in a text: none holds the
    mask's content, and none ends in a beginning of it (which, written just before the mask, would
    match first). Then the text is cut at the mask whatever comes before it, as the splice needs."""
    for content in contents:
        if content == mask:
            continue
        if mask in content or any(mask.startswith(content[k:]) for k in range(1, len(content))):
            return False
    return True


def _split_by_bert(content: str) -> bool:
    """True if BERT's pre-tokeniser never leaves ``content`` as one word (it has a punctuation
    character and more): so the mask's id comes only from the mask token itself, which the splice's
    position (the first mask of ``before + mask + after``) relies on."""
    return len(content) > 1 and any(c in string.punctuation for c in content)


def _split_by_gpt2_pattern(content: str) -> bool:
    """True if GPT-2's split pattern never leaves ``content`` as one piece (it mixes a letter or
    digit with another visible character, and is no contraction): as :func:`_split_by_bert`."""
    return any(c.isalnum() for c in content) and any(not c.isalnum() and not c.isspace() for c in content) \
        and content not in _CONTRACTIONS


def _plain_post_processor(node: Any) -> bool:
    """True for no post-processor or ones that only add special tokens around the text (or set offsets)."""
    if node is None:
        return True
    if node.get("type") == "Sequence":
        return all(_plain_post_processor(n) for n in node.get("processors") or [])
    return node.get("type") in _POST_PROCESSORS
