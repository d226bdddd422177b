"""``crows-nangia``'s shared positions: the one-replaced-span shortcut and the int-list search of
difflib's matching blocks give exactly what metric.py's ``difflib.SequenceMatcher`` gives, on
random pairs and on every real CrowS-Pairs pair."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from stereoset_eval.scoring.methods import crows


def metric_py_span(ids1: list[int], ids2: list[int]) -> tuple[list[int], list[int]]:
    """metric.py's ``get_span``, as written there (string tokens, difflib's opcodes)."""
    seq1, seq2 = [str(x) for x in ids1], [str(x) for x in ids2]
    template1, template2 = [], []
    for op in difflib.SequenceMatcher(None, seq1, seq2).get_opcodes():
        if op[0] == "equal":
            template1 += list(range(op[1], op[2]))
            template2 += list(range(op[3], op[4]))
    return template1, template2


# a small alphabet makes repeats, shared spans and cross matches common
tokens = st.lists(st.integers(min_value=0, max_value=4), max_size=14)


@settings(max_examples=3000, deadline=None)
@given(tokens, tokens)
def test_the_shortcut_agrees_with_difflib_on_random_pairs(a: list[int], b: list[int]) -> None:
    assert crows.shared_positions(a, b) == metric_py_span(a, b)
    fast = crows._one_replaced_span(a, b)
    assert fast is None or fast == metric_py_span(a, b)


@settings(max_examples=3000, deadline=None)
@given(tokens, tokens)
def test_the_int_search_agrees_with_difflib_on_random_pairs(a: list[int], b: list[int]) -> None:
    """Every pair, not only those the shortcut leaves: ties between equally long blocks, repeats, empty sides."""
    assert crows._matching_positions(a, b) == metric_py_span(a, b)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=60), min_size=1, max_size=60),
       st.lists(st.integers(min_value=100, max_value=103), min_size=1, max_size=4),
       st.lists(st.integers(min_value=200, max_value=203), min_size=1, max_size=4),
       st.integers(min_value=0, max_value=60))
def test_one_swapped_word_takes_the_shortcut(context: list[int], word_a: list[int], word_b: list[int], at: int) -> None:
    """The common CrowS-Pairs shape: one word swapped for another with no token in common."""
    at = min(at, len(context))
    a, b = context[:at] + word_a + context[at:], context[:at] + word_b + context[at:]
    assert crows._one_replaced_span(a, b) is not None
    assert crows.shared_positions(a, b) == metric_py_span(a, b)


def test_a_pure_insertion_is_left_to_difflib() -> None:
    """[A, A, A] against [A, Y, A, A]: difflib aligns a[0:2] with b[2:4], not prefix and suffix."""
    a, b = [1, 1, 1], [1, 9, 1, 1]
    assert crows._one_replaced_span(a, b) is None
    assert crows.shared_positions(a, b) == metric_py_span(a, b) == ([0, 1], [2, 3])


def test_long_sequences_are_left_to_difflib() -> None:
    """From 200 entries difflib treats popular entries as junk; the shortcut does not model that."""
    a = [1] * 150 + [7] + [1] * 60
    b = [1] * 150 + [8] + [1] * 60
    assert crows._one_replaced_span(a, b) is None
    assert crows.shared_positions(a, b) == metric_py_span(a, b)


def test_every_crows_pair_aligns_as_metric_py_does(crows_items, models_dir) -> None:
    """All 1,508 pairs, encoded by the BERT- and RoBERTa-style fixture tokenizers, as prepare encodes them."""
    from transformers import AutoTokenizer

    from stereoset_eval.scoring.tokenization import TokenizerView

    shortcut = 0
    for model, lower in (("tiny-bert", True), ("tiny-roberta", False)):
        path = str(models_dir / model)
        tok = TokenizerView(AutoTokenizer.from_pretrained(path), path, 512)
        for unit in crows.units(crows_items, {}):
            t1, t2 = unit.inputs["sent1"], unit.inputs["sent2"]
            ids1, ids2 = (tok.encode(t.lower() if lower else t, special=True) for t in (t1, t2))
            expected = metric_py_span(list(ids1), list(ids2))
            assert crows.shared_positions(ids1, ids2) == expected, unit.key
            assert crows._matching_positions(ids1, ids2) == expected, unit.key
            shortcut += crows._one_replaced_span(ids1, ids2) is not None
    assert shortcut > len(crows_items)  # most pairs (of 3,016 encodings) take the shortcut
