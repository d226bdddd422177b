"""The published gender-association lists after their issue-14 check against reproductions.

Each corrected source: an entry the reproduction has hits, an entry it lacks does not.
"""

from __future__ import annotations

import re

import pytest

from stereoset_eval.curation.lexicon import gender_association
from stereoset_eval.curation.lexicon.gender_association import SOURCES, lexicon_hits


def _sources_of(word: str, gender: str | None = None) -> set[str]:
    return {s for s, g, _ in lexicon_hits(word) if gender is None or g == gender}


# --- WinoBias: male_occupations.txt / female_occupations.txt ---------------------------------

@pytest.mark.parametrize("word", ["cook", "cooks", "construction", "sheriff", "ceo"])
def test_winobias_male_occupations_hit(word: str) -> None:
    assert "WINOBIAS_2018" in _sources_of(word, "male")


@pytest.mark.parametrize("word", ["engineer", "engineers"])
def test_winobias_has_no_engineer(word: str) -> None:
    assert "WINOBIAS_2018" not in _sources_of(word)  # not in the WinoBias files: removed


def test_winobias_lists_are_twenty_each() -> None:
    assert len(SOURCES["WINOBIAS_2018"]["male"]) == 20
    assert len(SOURCES["WINOBIAS_2018"]["female"]) == 20


def test_cook_is_conflicting_evidence() -> None:
    # WinoBias (male occupation) and Deaux & Lewis (female role behaviour) disagree; both stay
    hits = {(s, g) for s, g, _ in lexicon_hits("cook")}
    assert ("WINOBIAS_2018", "male") in hits and ("DEAUX_LEWIS_1984", "female") in hits


# --- Madera, Hebl & Martin (2009): agentic / communal ------------------------------------------

@pytest.mark.parametrize("word", ["caring", "assist", "assisted", "assisting"])
def test_madera_added_communal_items_hit(word: str) -> None:
    assert "MADERA_2009" in _sources_of(word, "female")


def test_madera_assist_is_a_whole_word() -> None:
    assert "MADERA_2009" not in _sources_of("assistant")  # the occupation is WinoBias's
    assert "WINOBIAS_2018" in _sources_of("assistant", "female")


@pytest.mark.parametrize("word", ["assertive", "daring", "outspoken", "intellectual"])
def test_madera_agentic_items_still_hit(word: str) -> None:
    assert "MADERA_2009" in _sources_of(word, "male")


def test_madera_takes_adjectives_not_the_copy_stems() -> None:
    assert "MADERA_2009" not in _sources_of("help")  # the copy's stem ``help``; the item is helpful
    assert "MADERA_2009" in _sources_of("helpful", "female")


# --- every list: one gender per entry, and the docstring says whether it was checked -----------

@pytest.mark.parametrize("source", sorted(SOURCES))
def test_no_entry_is_on_both_sides(source: str) -> None:
    assert not SOURCES[source]["male"] & SOURCES[source]["female"]


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_docstring_records_whether_each_list_was_checked(source: str) -> None:
    doc = gender_association.__doc__ or ""
    m = re.search(rf"``{source}``(.*?)(?=\n\* ``|\nNothing here)", doc, re.S)
    assert m, f"{source} is not described in the module docstring"
    assert re.search(r"\b[Cc]hecked\b", m.group(1)), f"{source}: the docstring does not say what it was checked against"
