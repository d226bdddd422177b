"""Gender swap: a table of swaps, context decisions, names, capitalisation, reversibility."""

from __future__ import annotations

import pytest

from stereoset_eval.curation.gender_swap import (
    apply_edits, original_text, resolve_her, revert_edits, swap_gender, swap_item,
)
from stereoset_eval.foundation.items import Item, Provenance, Sentence
from stereoset_eval.curation.text import tokenize

SWAPS = [
    # pronouns, reflexives, possessives
    ("He is kind.", "She is kind."),
    ("She is kind.", "He is kind."),
    ("I saw him yesterday.", "I saw her yesterday."),
    ("She did it herself.", "He did it himself."),
    ("He did it himself.", "She did it herself."),
    ("The car is his.", "The car is hers."),
    ("The car is hers.", "The car is his."),
    ("He lost his keys.", "She lost her keys."),
    # her -> his / him from the next word
    ("I asked her to go.", "I asked him to go."),
    ("I told her the story.", "I told him the story."),
    ("She loves her mother.", "He loves his father."),
    ("We called her.", "We called him."),
    ("They looked at her and left.", "They looked at him and left."),
    ("It made her sick.", "It made him sick."),
    ("She opened her own shop.", "He opened his own shop."),
    ("Sweep her off her feet.", "Sweep him off his feet."),
    ("Her beloved schoolgirl", "His beloved schoolboy"),
    ("Let her go home.", "Let him go home."),
    # capitalised sentence starts and all caps
    ("Her husband left.", "His wife left."),
    ("His wife left.", "Her husband left."),
    ("Schoolgirls are so innocent.", "Schoolboys are so innocent."),
    ("THE SCHOOLBOY IS BLANK.", "THE SCHOOLGIRL IS BLANK."),
    ("Gentlemen are polite.", "Ladies are polite."),
    # plurals and irregular plurals
    ("The men and women left.", "The women and men left."),
    ("Many mothers are caring.", "Many fathers are caring."),
    ("The ladies danced.", "The gentlemen danced."),
    ("Both wives agreed.", "Both husbands agreed."),
    ("The girls and boys played.", "The boys and girls played."),
    ("Males are typically messy.", "Females are typically messy."),
    ("The actresses bowed.", "The actors bowed."),
    # possessive clitics and contractions
    ("The man's car", "The woman's car"),
    ("All great mother's have it.", "All great father's have it."),
    ("Sometimes he'd experience flashbacks.", "Sometimes she'd experience flashbacks."),
    ("She's late.", "He's late."),
    # kinship, titles, role nouns
    ("My grandfather is wise.", "My grandmother is wise."),
    ("My mommy is busy.", "My daddy is busy."),
    ("Her sister was kind.", "His brother was kind."),
    ("The bride smiled at the groom.", "The groom smiled at the bride."),
    ("Mr. Burr was angry.", "Mrs. Burr was angry."),
    ("Yes sir! Right away sir!", "Yes ma'am! Right away ma'am!"),
    ("The spearman's muscles", "The spearwoman's muscles"),
    ("The male counselor", "The female counselor"),
    ("My uncle and aunt came.", "My aunt and uncle came."),
    ("Guys like it.", "Girls like it."),
    # given names left alone
    ("Melissa spent her days reading.", "Melissa spent his days reading."),
    ("Bill said he was ready.", "Bill said she was ready."),
    # untouched: no gendered word
    ("The chess player was asian.", "The chess player was asian."),
    ("He was masculine.", "She was masculine."),
]


@pytest.mark.parametrize(("text", "expected"), SWAPS)
def test_swap_table(text: str, expected: str) -> None:
    result = swap_gender(text)
    assert result.text == expected
    assert revert_edits(result.text, result.edits, "sent_less") == text
    assert apply_edits(text, result.edits, "sent_less") == expected


def test_swap_table_is_big_enough() -> None:
    assert len(SWAPS) >= 40


@pytest.mark.parametrize(("text", "names"), [
    ("Melissa spent her days reading.", [("Melissa", "female")]),
    ("Bill said he was ready.", [("Bill", "male")]),
    ("Sam called Earl.", [("Sam", None), ("Earl", "male")]),
    ("The mother is kind.", []),
])
def test_names_are_left_alone_and_reported(text: str, names: list) -> None:
    result = swap_gender(text)
    assert [(n, g) for _, n, g in result.names_left] == names
    for i, n, _ in result.names_left:
        assert tokenize(result.text)[i] == n


def test_protected_tokens_do_not_change() -> None:
    text = "She, herself, is a girl"
    girl = tokenize(text).index("girl")
    assert swap_gender(text, protect=frozenset({girl})).text == "He, himself, is a girl"


@pytest.mark.parametrize(("next1", "next2", "expected", "certain"), [
    (None, None, "him", True),
    ("own", None, "his", True),
    ("the", "story", "him", True),
    ("to", "go", "him", True),
    ("go", None, "him", True),
    ("quickly", None, "him", True),
    ("mother", None, "his", True),
    ("sick", None, "him", True),
    ("kind", "son", "his", True),
    ("beloved", "son", "his", False),
    ("crying", "daughter", "his", False),
    ("back", None, "him", False),
])
def test_resolve_her(next1, next2, expected: str, certain: bool) -> None:
    new, sure, reason = resolve_her(next1, next2)
    assert (new, sure) == (expected, certain)
    assert reason


def test_uncertain_decisions_are_recorded() -> None:
    result = swap_gender("The mother went to her crying daughter.")
    assert result.text == "The father went to his crying son."
    assert [d.old for d in result.uncertain] == ["her"]


def test_revert_rejects_edits_that_do_not_fit() -> None:
    result = swap_gender("He is kind.")
    with pytest.raises(ValueError, match="expects 'She'"):
        revert_edits("He is kind.", result.edits, "sent_less")


def test_swap_item_records_provenance_and_rebuilds_original() -> None:
    item = Item(
        id="x", source="crows-pairs", bias_type="gender", direction="stereo",
        sentences=(Sentence("x:more", "Melissa lost her keys.", "sent_more"),
                   Sentence("x:less", "The man lost his keys.", "sent_less")),
        provenance=Provenance("f.csv", "0" * 64, 3, "crows-csv"),
    )
    swapped = swap_item(item)
    assert swapped.id == "x~swap" and swapped.provenance.derived_from == "x"
    assert swapped.text("sent_more") == "Melissa lost his keys."
    assert swapped.text("sent_less") == "The woman lost her keys."
    assert {f.rule for f in swapped.flags} == {"name_left_alone"}
    for role in ("sent_more", "sent_less"):
        parent_role, text = original_text(swapped, role)
        assert parent_role == role and text == item.text(role)
