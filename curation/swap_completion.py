"""Completion of incomplete swaps in as-is pairs (CrowS-Pairs pairs that differ only by gender).

A crowd worker sometimes swapped the group word but not the pronouns that refer to it ("He said
he had been X because he was a man" / "He said he had been X because he was a woman"). When the
pair's differing words take ``sent_more`` from gender G to G' and ``sent_less`` still has a
pronoun of gender G *outside* the differing spans (the same word at the same place in both
sentences), that pronoun is swapped too — only when the worker swapped nouns, not pronouns (the
pronouns left then refer to other people: "He confronted the man and challenged him"), and when
a pronoun of gender G is tied to the swapped noun by a copula ("because he was a man"), so the
pronouns are the target's. The repair is mechanical and recorded like every
edit, with a ``swap_completion`` flag; a pair whose differing words do not go from one gender to
the other (mixed, names only) is left alone.
"""

from __future__ import annotations

from dataclasses import replace as dc_replace

from stereoset_eval.curation.gender_swap import swap_gender
from stereoset_eval.curation.lexicon import GENDER_OF, KIND_OF
from stereoset_eval.curation.spans import analyse_pair
from stereoset_eval.curation.target_swap import copula_linked
from stereoset_eval.curation.text import is_word, split_clitic, tokenize
from stereoset_eval.foundation.items import Flag, Item, Sentence

PRONOUN_KINDS = ("pronoun", "reflexive", "possessive")


def _span_gender(tokens) -> set[str]:
    return {GENDER_OF[split_clitic(t)[0].lower()] for _, t in tokens if split_clitic(t)[0].lower() in GENDER_OF}


def complete_swap(item: Item) -> Item:
    """``item`` with the pronouns its swap forgot swapped in ``sent_less`` (unchanged if none)."""
    a = analyse_pair(item)
    spans = a.of_kind("group")
    if not spans or not a.is_pure_group_swap:
        return item
    g_more = set().union(*(_span_gender(s.more) for s in spans))
    g_less = set().union(*(_span_gender(s.less) for s in spans))
    if len(g_more) != 1 or len(g_less) != 1 or g_more == g_less:
        return item
    g = g_more.pop()
    in_spans = {i for s in spans for i, _ in s.less}
    text = item.text("sent_less")
    tokens = tokenize(text)
    span_words = [(i, split_clitic(t)[0].lower()) for s in spans for i, t in s.less]
    if any(KIND_OF.get(w) in PRONOUN_KINDS for _, w in span_words):
        return item  # the worker swapped pronouns: the ones left refer to other people
    words_at = [i for i, t in enumerate(tokens) if is_word(t)]
    if not any(copula_linked(words_at, tokens, words_at.index(i), {i for i, _ in span_words}) for i in words_at
               if i not in in_spans and GENDER_OF.get(split_clitic(tokens[i])[0].lower()) == g
               and KIND_OF.get(split_clitic(tokens[i])[0].lower()) == "pronoun"):
        return item  # no pronoun is tied to the swapped noun ("he was a man"): it may be someone else
    todo = set()
    for i, t in enumerate(tokens):
        low = split_clitic(t)[0].lower()
        if is_word(t) and i not in in_spans and GENDER_OF.get(low) == g and KIND_OF.get(low) in PRONOUN_KINDS:
            todo.add(i)
    if not todo:
        return item
    r = swap_gender(text, role="sent_less", protect=frozenset(range(len(tokens))) - todo)
    if not r.changed:
        return item
    sentences = tuple(Sentence(s.id, r.text, s.role) if s.role == "sent_less" else s for s in item.sentences)
    flag = Flag("swap_completion", item.id, "info",
                "completed the swap in sent_less: " + ", ".join(f"{e.old}->{e.new}" for e in r.edits),
                {"edits": [e.to_dict() for e in r.edits], "from_gender": g})
    prov = dc_replace(item.provenance, edits=tuple(item.provenance.edits) + tuple(r.edits))
    return item.replace(sentences=sentences, provenance=prov, flags=tuple(item.flags) + (flag,))
