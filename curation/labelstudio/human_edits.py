"""A person's rewrite of a sentence as token edits, when the token model can express it.

Curated items record automatic edits as :class:`~stereoset_eval.foundation.items.Edit` token substitutions
(over the lossless :func:`stereoset_eval.curation.text.tokenize`); replaying them in reverse rebuilds
the source sentence. A human edit that only substitutes tokens ("Brad" -> "Linda") is
appended to those edits, so the chain source -> proposed -> final stays reversible. A
rewrite that inserts or deletes tokens cannot be written as substitutions: it is then
recorded only in the ``human_review`` flag (old and new sentence), and the item's note
says that its ``edits`` rebuild the proposed sentence, not the final one.
"""

from __future__ import annotations

import difflib

from stereoset_eval.foundation.items import Edit
from stereoset_eval.curation.text import tokenize


def substitution_edits(old: str, new: str, role: str) -> tuple[Edit, ...] | None:
    """Token substitutions turning ``old`` into ``new``; None when tokens are inserted or deleted.

    >>> [e.to_dict() for e in substitution_edits("Brad was sneaky.", "Linda was sneaky.", "sent_less")]
    [{'sentence_role': 'sent_less', 'index': 0, 'old': 'Brad', 'new': 'Linda'}]
    >>> substitution_edits("Men are hunters", "Men are good hunters", "sent_more") is None
    True
    """
    a, b = tokenize(old), tokenize(new)
    edits: list[Edit] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if op != "replace" or i2 - i1 != j2 - j1:
            return None
        edits += [Edit(role, i, a[i], b[j]) for i, j in zip(range(i1, i2), range(j1, j2)) if a[i] != b[j]]
    return tuple(edits)
