"""The datasets' own consensus: which attributes crowd workers used as a stereotype of a gender.

Every gender item of StereoSet (intrasentence and intersentence) and CrowS-Pairs (``stereo``
rows) is a crowd worker's statement "this attribute is stereotypical of this gender". Across
items, an attribute that several workers used as the stereotype of women (and never of men) is
evidence that it is female-coded; one used as the stereotype of both genders, or only ever as an
anti-stereotype (a negation picked to contrast, "caring"/"uncaring"), is no evidence.

:class:`Consensus` counts, per lower-cased content word, the items that used it as a stereotype
of each gender (``stereo``) and as an anti-stereotype of each gender (``anti``); look-ups leave
the asking item out (``exclude=``), so an item never votes for itself.

Rules 2.2 keep apart the two kinds of stereotype use (``attribute``): an **attribute use** is a
word a worker *chose* as the stereotype — a StereoSet intrasentence option ("A mother will always
love / beat her children"), or a word of a CrowS-Pairs ``sent_more`` that its ``sent_less``
replaced ("pretending" / "acting"); a **context use** is a word that merely stood in a stereotype
sentence (a StereoSet intersentence continuation, the rest of a CrowS-Pairs sentence: "lot" in
"spending a lot of money"). Context uses are weak evidence: they count, but never decide alone
where the validity rules ask for direct evidence (:mod:`stereoset_eval.curation.validity`).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from stereoset_eval.curation.lexicon import GENDER_OF, name_gender
from stereoset_eval.curation.lexicon import function_words as fw
from stereoset_eval.curation.text import words

OTHER = {"male": "female", "female": "male"}
STOP_WORDS = fw.DETERMINERS | fw.PREPOSITIONS | fw.CONJUNCTIONS | fw.PRONOUNS | fw.AUXILIARIES | fw.ADVERBS


def target_gender(target: str | None) -> str | None:
    """Gender of a StereoSet target term (``schoolgirl`` → female, ``gentlemen`` → male)."""
    if not target:
        return None
    t = target.lower().strip()
    if t in GENDER_OF:
        return GENDER_OF[t]
    for cand in (t.rstrip("s"), t[:-2] + "an" if t.endswith("en") else t):
        if cand in GENDER_OF:
            return GENDER_OF[cand]
    return None


def sentence_gender(text: str) -> str | None:
    """The gender of the gendered words of ``text`` when they agree (None when mixed or absent)."""
    found = set()
    for w in words(text):
        g = GENDER_OF.get(w)
        if g is None:
            ok, g = name_gender(w.capitalize())
            g = g if ok else None
        if g:
            found.add(g)
    return found.pop() if len(found) == 1 else None


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` that are neither function words nor gender terms."""
    return {w for w in words(text) if w not in STOP_WORDS and w not in GENDER_OF and len(w) > 2}


@dataclass
class Consensus:
    """Per word: item ids that used it as a stereotype / anti-stereotype of each gender."""

    stereo: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    anti: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    attribute: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))

    def add(self, word: str, gender: str, item_id: str, *, stereotype: bool, chosen: bool = False) -> None:
        """Count one use; ``chosen``: the word was the perturbed option itself (an attribute use)."""
        (self.stereo if stereotype else self.anti)[word][gender].add(item_id)
        if stereotype and chosen:
            self.attribute[word][gender].add(item_id)

    def attribute_votes(self, word: str, *, exclude: str = "") -> dict[str, int]:
        """Stereotype uses of ``word`` as the chosen option (not merely in the sentence), ``exclude`` left out."""
        w = word.lower()
        return {g: len(self.attribute.get(w, {}).get(g, set()) - {exclude}) for g in ("female", "male")}

    def votes(self, word: str, *, exclude: str = "") -> dict[str, int]:
        """``{"female": n, "male": n}`` stereotype uses of ``word`` by other items than ``exclude``."""
        w = word.lower()
        return {g: len(self.stereo.get(w, {}).get(g, set()) - {exclude}) for g in ("female", "male")}

    def anti_votes(self, word: str, *, exclude: str = "") -> dict[str, int]:
        w = word.lower()
        return {g: len(self.anti.get(w, {}).get(g, set()) - {exclude}) for g in ("female", "male")}


def build_consensus(items: Sequence) -> Consensus:
    """Count stereotype uses over loaded source items (any mix; non-gender items are ignored).

    StereoSet: the words that differ between the stereotype and anti-stereotype sentences (the
    chosen attribute, an attribute use; for intersentence items, the content words of one
    continuation only, context uses), credited to the target's gender. CrowS-Pairs ``stereo``
    rows: the content words of ``sent_more`` credited to its gender when it has one (attribute
    uses: those ``sent_less`` does not have).
    """
    c = Consensus()
    for it in items:
        if it.bias_type != "gender":
            continue
        if it.source in ("stereoset-intra", "stereoset-inter"):
            g = target_gender(it.target)
            if g is None:
                continue
            try:
                s, a = content_words(it.text("stereotype")), content_words(it.text("anti-stereotype"))
            except KeyError:
                continue
            chosen = it.source == "stereoset-intra"
            for w in s - a:
                c.add(w, g, it.id, stereotype=True, chosen=chosen)
            for w in a - s:
                c.add(w, g, it.id, stereotype=False)
        elif it.source in ("crows-pairs", "crows-pairs-revised") and it.direction == "stereo":
            try:
                more = it.text("sent_more")
            except KeyError:
                continue
            g = sentence_gender(more)
            if g:
                try:
                    less = content_words(it.text("sent_less"))
                except KeyError:
                    less = set()
                for w in content_words(more):
                    c.add(w, g, it.id, stereotype=True, chosen=w not in less)
    return c
