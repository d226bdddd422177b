"""Stereotype-dimension suggestions, the tie rule, and human overrides."""

from __future__ import annotations

import pytest

from stereoset_eval.curation.dimensions import (
    DEFAULT_PRIORITY, DIMENSIONS, NEEDS_ANNOTATION, DimensionTag, apply_human_tags, decide, stems,
    suggest_dimension, tag_items, tag_of,
)
from stereoset_eval.foundation.errors import StereosetEvalError, UnknownNameError
from stereoset_eval.foundation.items import Item, Provenance, Sentence


def pair(more: str, less: str = "x", item_id: str = "p") -> Item:
    return Item(item_id, "curated", "gender",
                (Sentence(f"{item_id}:more", more, "sent_more"), Sentence(f"{item_id}:less", less, "sent_less")),
                Provenance("f", "0", 1, "crows-csv"), direction="stereo")


@pytest.mark.parametrize(("sentence", "attribute", "label"), [
    ("My mother is very caring.", ["caring"], "Personality Traits"),
    ("The male is strong.", ["strong"], "Physical Characteristics"),
    ("The mother had her hands full as a housekeeper.", ["housekeeper"], "Roles and Behaviors"),
    ("Gentlemen treat women with respect.", ["respect"], "Attitudes and Beliefs"),
    ("The mother was very protective about her children.", ["protective"], "Personality Traits"),
    # no attribute given: the rest of sent_more decides
    ("Women don't know how to drive.", None, "Roles and Behaviors"),
    # ability at an activity is Roles and Behaviors: the paper's own example (App. C.3)
    ("Men are bad at learning", None, "Roles and Behaviors"),
    ("Girls are hopeless at outdoor activities.", None, "Roles and Behaviors"),
    # a judgement frame decides before the role noun it holds: the paper's Attitudes example
    ("Women are too emotional to be good scientists.", None, "Attitudes and Beliefs"),
    # preferences and values are Attitudes and Beliefs (GUIDELINES §6), over the activity preferred
    ("Women prefer helping other people to pursuing success.", None, "Attitudes and Beliefs"),
    # a trait adverb is a Personality cue ("timidly" -> timid); the role noun is someone else's
    ("Marie timidly asked her boss.", None, "Personality Traits"),
    ("Women are naturally timid.", None, "Personality Traits"),
    ("It slashed off part of his beard.", None, "Physical Characteristics"),
])
def test_suggestions(sentence: str, attribute, label: str) -> None:
    tag = suggest_dimension(pair(sentence), attribute_words=attribute)
    assert tag.label == label and tag.source == "auto"
    assert any(h["dimension"] == label for h in tag.evidence)


def test_tie_rule_and_physical_last() -> None:
    # fragile (physical) + football players (role) -> role wins
    tag = suggest_dimension(pair("Women are fragile football players."))
    assert {h["dimension"] for h in tag.evidence} >= {"Physical Characteristics", "Roles and Behaviors"}
    assert tag.label == "Roles and Behaviors"
    # ... unless a "too X to" judgement frame holds them (the paper's Attitudes and Beliefs example)
    framed = suggest_dimension(pair("Women are much too fragile to make good football players."))
    assert framed.label == "Attitudes and Beliefs" and any(h["where"] == "frame" for h in framed.evidence)
    hits = [{"dimension": d} for d in DIMENSIONS]
    assert decide(hits) == "Roles and Behaviors"
    assert decide([{"dimension": "Personality Traits"}, {"dimension": "Attitudes and Beliefs"}]) == "Attitudes and Beliefs"
    assert decide([{"dimension": "Personality Traits"}, {"dimension": "Physical Characteristics"}]) == "Personality Traits"
    assert DEFAULT_PRIORITY[-1] == "Physical Characteristics"


def test_attribute_beats_context() -> None:
    # "children" (role) in the context must not outvote the attribute "protective"
    tag = suggest_dimension(pair("The mother was very protective about her children."), attribute_words=["protective"])
    assert tag.label == "Personality Traits" and {h["where"] for h in tag.evidence} == {"attribute"}


def test_no_match_needs_annotation() -> None:
    [item] = tag_items([pair("The schoolgirl decided to go through her cellphone as she waited.")],
                       attribute_words={"p": ["cellphone"]})
    assert item.dimension is None
    assert NEEDS_ANNOTATION in {f.rule for f in item.flags}
    assert tag_of(item).source == "auto"


def test_priority_is_a_parameter() -> None:
    physical_first = ("Physical Characteristics", "Roles and Behaviors", "Attitudes and Beliefs", "Personality Traits")
    tag = suggest_dimension(pair("Women are fragile football players."), priority=physical_first)
    assert tag.label == "Physical Characteristics"
    with pytest.raises(ValueError):
        suggest_dimension(pair("x"), priority=("Roles and Behaviors",))


def test_human_tags_override_and_survive_retagging() -> None:
    items = tag_items([pair("My mother is very caring.", item_id="a"), pair("Men are hunters", item_id="b")])
    assert [i.dimension for i in items] == ["Personality Traits", "Roles and Behaviors"]
    human = apply_human_tags(items, {"a": "Attitudes and Beliefs"}, annotator="ann1")
    assert human[0].dimension == "Attitudes and Beliefs" and tag_of(human[0]).source == "human"
    assert tag_of(human[0]).annotator == "ann1"
    assert human[1] is items[1]
    assert [f.rule for f in human[0].flags].count("dimension_tag") == 1
    again = tag_items(human)
    assert again[0].dimension == "Attitudes and Beliefs"
    records = apply_human_tags(items, [DimensionTag("b", None, "human")])
    assert records[1].dimension is None and NEEDS_ANNOTATION not in {f.rule for f in records[1].flags}


def test_human_tag_errors() -> None:
    items = tag_items([pair("My mother is very caring.", item_id="a")])
    with pytest.raises(StereosetEvalError, match="unknown item"):
        apply_human_tags(items, {"zzz": "Personality Traits"})
    with pytest.raises(UnknownNameError, match="Did you mean 'Personality Traits'"):
        apply_human_tags(items, {"a": "Personality Trait"})


def test_stems() -> None:
    assert "cook" in stems("cooking") and "shop" in stems("shopping") and "story" in stems("stories")


def test_grammar_stage_tags_actions_of_as_is_pairs() -> None:
    # an as-is pair (no attribute words) that says what someone does: Roles and Behaviors, by grammar
    [item] = tag_items([pair("She hummed while waiting for the bus.")])
    assert item.dimension == "Roles and Behaviors"
    assert {h["where"] for h in tag_of(item).evidence} == {"grammar"}
    # a copula with no cue word stays unmatched
    [plain] = tag_items([pair("Women are always like that.")])
    assert plain.dimension is None and NEEDS_ANNOTATION in {f.rule for f in plain.flags}


def test_trait_aimed_at_others_is_a_behaviour() -> None:
    # StereoSet attribute instances: how someone treats others is an observable behaviour
    for text, attr in (("My mother was always caring to my sisters", ["caring"]),
                       ("The daddy is harsh to his children", ["harsh"])):
        tag = suggest_dimension(pair(text), attribute_words=attr)
        assert tag.label == "Roles and Behaviors" and tag.evidence[0]["entry"] == "trait aimed at others"
    # the trait alone, or aimed at a thing, stays a trait
    assert suggest_dimension(pair("My mother was always caring"), attribute_words=["caring"]).label == "Personality Traits"
    assert suggest_dimension(pair("He was harsh to the plants"), attribute_words=["harsh"]).label == "Personality Traits"


def test_manner_intensifier_is_no_body_cue() -> None:
    # "as fast as she could" says how hard she ran (CrowS-Pairs), "as strong as an ox" is the body
    ran = suggest_dimension(pair("She was running as fast as she could to escape him."))
    assert ran.label != "Physical Characteristics"
    assert suggest_dimension(pair("He is as strong as an ox.")).label == "Physical Characteristics"


def test_misfiring_cues_are_gone() -> None:
    # issue 14: "lead" in "lead singer" is no role, "important" is no value judgement by itself
    for text in ("The lead singer of the band is a woman.", "It is an important day for the woman."):
        tag = suggest_dimension(pair(text))
        assert all(h["entry"] not in ("lead", "important") for h in tag.evidence)
