"""Unit tests of the scoring building blocks that need no model: planning, options, helpers."""

from __future__ import annotations

import pytest

from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.scoring.methods import METHODS, get_method
from stereoset_eval.scoring.methods.crows import ordered_roles, shared_positions
from stereoset_eval.scoring.methods.pll import mask_sets, scored_positions
from stereoset_eval.scoring.methods.stereoset_causal import with_final_punctuation
from stereoset_eval.scoring.methods.stereoset_mlm import template_word
from stereoset_eval.scoring.methods.stereoset_nsp import pair_input
from stereoset_eval.scoring.records import ScoringError
from stereoset_eval.scoring.requests import BatchRow, Request, merge_requests, plan_batches, plan_groups


def test_registry_names_match_the_agreed_interface():
    assert set(METHODS) == {"stereoset-mlm", "stereoset-causal", "stereoset-nsp", "stereoset-inter-causal",
                            "crows-nangia", "pll", "pll-word-l2r", "causal-ll"}
    for name, method in METHODS.items():
        assert method.name == name and method.model_kind in ("masked", "causal", "nsp")
        assert method.description and method.reference


def test_unknown_method_suggests_a_name():
    with pytest.raises(UnknownNameError, match="Did you mean 'pll'"):
        get_method("pl")


@pytest.mark.parametrize("method, options, error", [
    ("stereoset-mlm", {"leading_space": "yes"}, "not one of"),
    ("stereoset-mlm", {"lowercase": True}, "has no option"),
    ("crows-nangia", {"round_ndigits": -1}, "invalid"),
    ("crows-nangia", {"lowercase": "maybe"}, "not one of"),
    ("stereoset-inter-causal", {"example_cap": 1.5}, "invalid"),
    ("causal-ll", {"start_token": ""}, "invalid"),
])
def test_bad_options_are_named(method, options, error):
    with pytest.raises(ScoringError, match=error):
        get_method(method).validate_options(options)


def test_defaults_are_the_faithful_ones():
    assert get_method("stereoset-mlm").validate_options(None) == {"leading_space": "none"}
    assert get_method("crows-nangia").validate_options({}) == {"lowercase": "auto", "round_ndigits": 3}
    assert get_method("stereoset-inter-causal").validate_options({})["example_cap"] is None


def test_example_cap_is_not_part_of_the_cache_key():
    m = get_method("stereoset-inter-causal")
    assert m.key_options({"start_token": "x", "example_cap": 5}) == {"start_token": "x"}


@pytest.mark.parametrize("context, sentence, expected", [
    ("The chess player was BLANK.", "The chess player was hispanic.", "hispanic"),
    ("The chess player was BLANK.", "The chess player was fox.", "fox"),
    ("BLANK people are rich.", "Chinese-American people are rich.", "ChineseAmerican"),
    ("He is a BLANK, always.", "He is a nerd, always.", "nerd"),  # punctuation stripped
    ("The BLANK man and BLANK.", "The old man and sea.", "sea"),  # last BLANK word wins
    ("A BLANKish day.", "A sunnyish day.", "sunnyish"),  # the whole word at the BLANK position
])
def test_template_word(context, sentence, expected):
    assert template_word(context, sentence) == expected


@pytest.mark.parametrize("context, sentence", [("No blank here.", "No blank here."), ("A b c BLANK.", "A b.")])
def test_template_word_errors(context, sentence):
    with pytest.raises(ValueError):
        template_word(context, sentence)


@pytest.mark.parametrize("ids1, ids2, expected", [
    ([2, 10, 11, 3], [2, 12, 11, 3], ([0, 2, 3], [0, 2, 3])),
    ([2, 10, 11, 3], [2, 10, 13, 11, 3], ([0, 1, 2, 3], [0, 1, 3, 4])),
    ([2, 3], [2, 3], ([0, 1], [0, 1])),
    ([2, 5, 3], [2, 6, 7, 3], ([0, 2], [0, 3])),
])
def test_shared_positions(ids1, ids2, expected):
    assert shared_positions(ids1, ids2) == expected


def test_shared_positions_is_order_sensitive_like_difflib():
    a, b = [2, 7, 8, 7, 3], [2, 8, 7, 8, 3]
    t_ab = shared_positions(a, b)
    t_ba = shared_positions(b, a)
    assert (t_ab[0], t_ab[1]) != (t_ba[1], t_ba[0])  # why metric.py's sent1/sent2 order is kept


@pytest.mark.parametrize("direction, roles", [("stereo", ("sent_more", "sent_less")),
                                              ("antistereo", ("sent_less", "sent_more"))])
def test_crows_sentence_order(direction, roles):
    assert ordered_roles(direction) == roles


@pytest.mark.parametrize("context, expected", [
    ("Many people live in Ethiopia.", "Many people live in Ethiopia."),
    ("Many people live in Ethiopia", "Many people live in Ethiopia."),
    ("Is it?", "Is it?"), ("Wow!", "Wow!"), ('He said "no"', 'He said "no".'),
])
def test_context_punctuation(context, expected):
    assert with_final_punctuation(context) == expected


def test_nsp_pair_input_segments():
    assert pair_input([10, 11], [12, 13], cls_id=2, sep_id=3) == ([2, 10, 11, 3, 12, 13, 3], [0, 0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("ids, special, excluded, expected", [
    ([2, 10, 11, 3], [1, 0, 0, 1], {2, 3, 0}, [1, 2]),
    ([2, 10, 3, 11, 3], [1, 0, 0, 0, 1], {2, 3, 0}, [1, 3]),  # a SEP id inside the text: minicons skips it
    ([10, 11], [0, 0], set(), [0, 1]),
    ([2, 10, 11, 3], [1, 1, 0, 1], {2, 3, 0}, [2]),  # a special token inside
    ([2, 10, 11, 3], [1, 0, 0, 0], {2, 3, 0}, [1, 2]),  # the SEP id unmarked: skipped by its id
    ([2, 3], [1, 1], {2, 3, 0}, []),
    ([7], [0], set(), [0]),
    ([], [], set(), []),
])
def test_pll_scored_positions(ids, special, excluded, expected):
    assert scored_positions(ids, special, excluded) == expected
    assert scored_positions(tuple(ids), tuple(special), frozenset(excluded)) == expected


def test_pll_scored_positions_equal_the_rule_on_random_masks():
    """The shortcut for specials at both ends only gives minicons' rule on every shape."""
    import random

    rng = random.Random(0)
    for _ in range(3000):
        n = rng.randint(0, 8)
        ids = [rng.randint(0, 5) for _ in range(n)]
        special = [rng.choice([0, 0, 0, 1]) for _ in range(n)]
        if n > 1 and rng.random() < 0.5:
            special[0] = special[-1] = 1
        excluded = set(rng.sample(range(6), rng.randint(0, 3)))
        expected = [i for i in range(n) if not special[i] and ids[i] not in excluded]
        assert scored_positions(ids, special, excluded) == expected


@pytest.mark.parametrize("positions, word_ids, l2r, expected", [
    ([1, 2, 3], [None, 0, 0, 1, None], True, [[1, 2], [2], [3]]),
    ([1, 2, 3, 4], [None, 0, 0, 0, 1, None], True, [[1, 2, 3], [2, 3], [3], [4]]),
    ([1, 2, 3], [None, 0, 0, 1, None], False, [[1], [2], [3]]),
    ([1, 2], [None, 0, 1, 1, None], True, [[1], [2]]),  # later pieces beyond the last scored position stay
])
def test_pll_mask_sets(positions, word_ids, l2r, expected):
    assert mask_sets(positions, word_ids, within_word_l2r=l2r) == expected


def test_merge_requests_unions_gathers_and_keeps_types_apart():
    a = Request((2, 4, 3), ((1, 7),))
    b = Request((2, 4, 3), ((1, 9), (1, 7)))
    c = Request((2, 4, 3), ((0, 0),), token_type_ids=(0, 0, 1))
    rows = merge_requests([a, b, c])
    assert [(r.token_type_ids, r.gather) for r in rows] == [(None, ((1, 7), (1, 9))), ((0, 0, 1), ((0, 0),))]


def test_request_rejects_misaligned_token_types():
    with pytest.raises(ValueError):
        Request((1, 2), (), token_type_ids=(0,))


@pytest.mark.parametrize("lengths, budget, expected", [
    ([5, 2, 3, 2], 6, [[2, 2], [3], [5]]),
    ([4, 4, 4], 1, [[4], [4], [4]]),          # a row longer than the budget still gets a batch
    ([1, 1, 1, 1], 100, [[1, 1, 1, 1]]),
    ([], 10, []),
])
def test_plan_batches(lengths, budget, expected):
    rows = [BatchRow(tuple(range(n)), None, ()) for n in lengths]
    assert [[len(r.input_ids) for r in b] for b in plan_batches(rows, budget)] == expected


def _cuts_top_down(lengths, budget, overhead):
    """The cheapest plan, worked out top-down: the last segment of whole lengths chosen first (ties:
    the one that starts earliest), each segment run as full batches padded to its longest row."""
    import functools

    ends = [i + 1 for i, (a, b) in enumerate(zip(lengths, list(lengths[1:]) + [None])) if a != b]
    start_of = [0] + ends

    @functools.lru_cache(maxsize=None)
    def cheapest(j):  # (cost, segments) of the rows before ends[j - 1]
        if j == 0:
            return 0, ()
        stop, width = ends[j - 1], lengths[ends[j - 1] - 1]
        per = max(1, budget // width)
        cost, i = min((cheapest(i)[0] + (stop - start_of[i]) * width + -(-(stop - start_of[i]) // per) * overhead, i)
                      for i in range(j))
        return cost, cheapest(i)[1] + ((start_of[i], stop, per),)

    return [(k, min(stop, k + per)) for start, stop, per in cheapest(len(ends))[1] for k in range(start, stop, per)]


def test_batch_cuts_make_the_cheapest_plan_on_random_lengths():
    """The cut points of the cheapest plan worked out top-down (so they did not move when the runs of
    lengths came to be found in C), on lists and on arrays; every row once, in order."""
    import random

    import numpy as np

    from stereoset_eval.scoring.requests import batch_cuts

    rng = random.Random(0)
    for _ in range(400):
        lengths = sorted(rng.randint(1, 12) for _ in range(rng.randint(0, 40)))
        budget, overhead = rng.choice([1, 4, 16, 40, 200]), rng.choice([0, 3, 64, 9216])
        cuts = batch_cuts(lengths, budget, overhead_tokens=overhead)
        assert cuts == _cuts_top_down(lengths, budget, overhead)
        assert cuts == batch_cuts(np.array(lengths, dtype=np.int64), budget, overhead_tokens=overhead)
        assert [i for c in cuts for i in range(*c)] == list(range(len(lengths)))


def test_plan_batches_rejects_a_zero_budget():
    with pytest.raises(ValueError):
        plan_batches([], 0)


def test_plan_groups_counts_shared_inputs_once_and_is_deterministic():
    shared = Request((1, 2, 3), ((2, 5),))
    units = [[shared, Request((1, 2, 3, 4), ())], [shared], [Request((9,) * 10, ())], [shared]]
    groups = plan_groups(units, 8)
    assert groups == plan_groups(units, 8)
    assert sorted(i for g in groups for i in g) == [0, 1, 2, 3]
    assert groups[0] == [1, 3, 0]  # unit 1 and 3 share one input; unit 0 adds one more row


def test_methods_import_without_torch():
    import subprocess
    import sys

    code = ("import sys; import scoring, stereoset_eval.scoring.methods, stereoset_eval.cli.commands.score; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("module", ["stereoset_eval.scoring.requests", "stereoset_eval.scoring.methods.stereoset_mlm", "stereoset_eval.scoring.methods.crows",
                                    "stereoset_eval.scoring.methods.pll", "stereoset_eval.scoring.methods.stereoset_causal",
                                    "stereoset_eval.scoring.methods.stereoset_nsp"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
