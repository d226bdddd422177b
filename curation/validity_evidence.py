"""The evidence behind a validity decision: published lists, the datasets' consensus, valence.

:func:`associate` sums, for a set of attribute words, the points each gender gets from the
published gender-association lists and from the datasets' own consensus (other items that used
the word as a stereotype of a gender); :func:`valence` reads VADER. The parameters are
:class:`ValidityConfig` (recorded in provenance). Split out of :mod:`.validity`, which turns the
evidence into verdicts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

from stereoset_eval.curation.consensus import OTHER, Consensus
from stereoset_eval.curation.lexicon.gender_association import lexicon_hits
from stereoset_eval.curation.lexicon.sentiment import vader_lexicon


# the rules of these verdicts are registered in stereoset_eval.curation.rules.stage_rules
NEGATION_PREFIXES = ("un", "in", "im", "dis", "non")


@dataclass(frozen=True)
class ValidityConfig:
    """Parameters of the validity and direction decisions (recorded in provenance)."""

    enabled: bool = True
    lexicon_weight: float = 1.5
    stereo_cap: float = 3.0
    anti_weight: float = 0.5
    anti_cap: float = 1.5
    min_score: float = 1.5
    min_direct: float = 1.5
    ratio: float = 2.0
    negativity: float = -1.5
    positivity: float = 1.5
    review_below: float = 0.0
    # rules 2.2: an anti-stereotype instance (a contrast the worker picked) is kept or swapped, and
    # a source label overturned, automatically only on direct evidence: a published list or the
    # word chosen as an option (an attribute use, :mod:`stereoset_eval.curation.consensus`) at
    # least this much; 0 disables
    min_chosen: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Association:
    """Points per gender for a set of attribute words, the associated gender, and the evidence."""

    female: float
    male: float
    gender: str | None
    evidence: tuple[dict[str, Any], ...]
    chosen: tuple[tuple[str, float], ...] = ()  # per gender: lexicon points + attribute (chosen-option) uses

    def chosen_for(self, gender: str) -> float:
        """Direct evidence for ``gender`` beyond context uses (a list, or the word chosen as an option)."""
        return dict(self.chosen).get(gender, 0.0)

    @property
    def conflicting(self) -> bool:
        return self.gender is None and min(self.female, self.male) >= 1.5


def associate(words: Sequence[str], consensus: Consensus | None, *, exclude: str = "",
              config: ValidityConfig = ValidityConfig()) -> Association:
    """Sum the lexicon and consensus evidence for ``words`` (lower case)."""
    pts = {"female": 0.0, "male": 0.0}
    direct = {"female": 0.0, "male": 0.0}  # lexicon + stereotype uses: anti-stereotype uses alone never decide
    chosen = {"female": 0.0, "male": 0.0}  # lexicon + attribute uses: context uses alone are weak
    ev: list[dict[str, Any]] = []
    for w in words:
        for source, hit_gender, entry in lexicon_hits(w):
            pts[hit_gender] += config.lexicon_weight
            direct[hit_gender] += config.lexicon_weight
            chosen[hit_gender] += config.lexicon_weight
            ev.append({"word": w, "source": source, "gender": hit_gender, "entry": entry})
        if consensus is not None:
            st = consensus.votes(w, exclude=exclude)
            an = consensus.anti_votes(w, exclude=exclude)
            at = consensus.attribute_votes(w, exclude=exclude)
            for g in ("female", "male"):
                s = min(float(st[g]), config.stereo_cap)
                a = min(an[OTHER[g]] * config.anti_weight, config.anti_cap)
                if s or a:
                    pts[g] += s + a
                    direct[g] += s
                    chosen[g] += min(float(at[g]), config.stereo_cap)
                    ev.append({"word": w, "source": "dataset_consensus", "gender": g,
                               "stereotype_uses": st[g], "attribute_uses": at[g],
                               "anti_stereotype_uses_of_other": an[OTHER[g]]})
    f, m = pts["female"], pts["male"]
    gender: str | None = None
    if f >= config.min_score and f >= config.ratio * m and direct["female"] >= config.min_direct:
        gender = "female"
    elif m >= config.min_score and m >= config.ratio * f and direct["male"] >= config.min_direct:
        gender = "male"
    return Association(round(f, 3), round(m, 3), gender, tuple(ev),
                       tuple((g, round(v, 3)) for g, v in chosen.items()))


def valence(word: str) -> float | None:
    """VADER valence of ``word``; a negated positive word (``uncaring``) gets minus its stem's."""
    lex = vader_lexicon()
    w = word.lower()
    if w in lex:
        return float(lex[w])
    for p in NEGATION_PREFIXES:
        if w.startswith(p) and w[len(p):] in lex and lex[w[len(p):]] > 0:
            return -float(lex[w[len(p):]])
    return None


def _spelling_fixes(words: Sequence[str]) -> dict[str, str]:
    """Misspelt attribute words and the correction the repair step will write (one edit away,
    :func:`~stereoset_eval.curation.repair.typo_correction`): the evidence is looked up for the
    word the sentence means, since the repair runs after the validity decision."""
    from stereoset_eval.curation.repair import typo_correction

    return {w: fix for w in dict.fromkeys(words) if (fix := typo_correction(w)) is not None}
