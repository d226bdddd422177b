"""The cheap request path of issue 35: slotted requests, an unshared request as its own row, and
the one-gather-per-row fast paths of the scorer, each equal to the general path."""

from __future__ import annotations

import pytest

import random

from stereoset_eval.scoring.requests import BatchRow, Request, gather_arrays, gather_index, merge_requests


def test_requests_compare_and_hash_by_value_and_check_token_types():
    a, b = Request((1, 2, 3), ((1, 7),)), Request((1, 2, 3), ((1, 7),))
    assert a == b and hash(a) == hash(b) and len(a) == 3 and a.key == ((1, 2, 3), None)
    assert a != Request((1, 2, 3), ((1, 8),)) and a != BatchRow((1, 2, 3), None, ((1, 7),))
    with pytest.raises(ValueError, match="as long as input_ids"):
        Request((1, 2, 3), ((0, 1),), (0, 0))
    assert "input_ids=(1, 2, 3)" in repr(a)


def test_an_unshared_request_is_its_own_row_and_shared_inputs_merge_in_request_order():
    lone = Request((5, 6), ((0, 9),))
    first, second = Request((1, 2, 3), ((1, 7),)), Request((1, 2, 3), ((2, 8), (1, 7)))
    twice = Request((4, 4), ((0, 1), (0, 1)))  # a request asking one pair twice still gets it once
    rows = merge_requests([first, lone, second, twice])
    assert [r.input_ids for r in rows] == [(1, 2, 3), (5, 6), (4, 4)]
    assert rows[1] is lone  # no copy
    assert isinstance(rows[0], BatchRow) and rows[0].gather == ((1, 7), (2, 8))
    assert rows[2].gather == ((0, 1),)
    again = merge_requests(rows)  # rows merge again as they are (a collected launch does this)
    assert [(r.input_ids, r.gather) for r in again] == [(r.input_ids, r.gather) for r in rows]


def test_gather_index_reads_each_row_position_once_over_requests_and_rows():
    rows = [BatchRow((1, 2, 3), None, ((1, 7),)), Request((4, 5), ((0, 9),))]
    assert gather_index(rows) == ([(0, 1), (1, 0)], [0, 1], [7, 9])
    wide = rows + [BatchRow((6, 7), None, ((0, 1), (1, 2), (0, 3)))]  # row 2: two positions, one read twice
    assert gather_index(wide) == ([(0, 1), (1, 0), (2, 0), (2, 1)], [0, 1, 2, 3, 2], [7, 9, 1, 2, 3])


def test_gather_arrays_equal_gather_index_on_random_rows():
    """The scorer's array form of the gathers (the causal methods' every-position rows) reads the
    same pairs in the same order as gather_index, shared positions and repeated pairs included."""
    rng = random.Random(35)
    for _ in range(300):
        rows = [BatchRow(tuple(range(rng.randint(1, 6))), None,
                         tuple((rng.randint(0, 4), rng.randint(0, 9)) for _ in range(rng.randint(1, 5))))
                for _ in range(rng.randint(1, 6))]
        pairs, g_pair, g_target = gather_index(rows)
        pair_rows, pair_pos, a_pair, a_target = gather_arrays(rows)
        assert list(zip(pair_rows.tolist(), pair_pos.tolist())) == pairs
        assert a_pair.tolist() == g_pair and a_target.tolist() == g_target
    shared_first = [BatchRow((50,), None, ((0, 3), (0, 4), (0, 3))), BatchRow((1, 2, 3), None, ((0, 2), (1, 3)))]
    assert [a.tolist() for a in gather_arrays(shared_first)] == [[0, 1, 1], [0, 0, 1], [0, 0, 0, 1, 2], [3, 4, 3, 2, 3]]


def test_scorer_one_gather_per_row_path_equals_the_general_path(models_dir):
    """The same rows through the fast path (one gather each) and the general path (a second gather
    on the last row forces it): the shared gathers agree to float32 rounding, and the handles split
    their values one list per row either way."""
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.scorers import Scorer, _split

    backend = load_backend(str(models_dir / "tiny-bert"), kind="masked", device="cpu")
    mask = backend.tokenizer.require_id("mask", method="test")
    ids = tuple(backend.tokenizer.encode("The nurse said she was tired.", special=True))
    rows = [BatchRow(ids[:p] + (mask,) + ids[p + 1:], None, ((p, ids[p]),)) for p in range(1, len(ids) - 1)]
    scorer = Scorer(backend)
    fast = scorer.launch(rows).result()
    widened = rows[:-1] + [BatchRow(rows[-1].input_ids, None, rows[-1].gather + ((1, ids[1]),))]
    general = scorer.launch(widened).result()
    assert all(len(v) == 1 for v in fast) and len(general[-1]) == 2
    for a, b in zip(fast, general):
        assert a[0] == pytest.approx(b[0], abs=1e-5)
    assert _split([1.0, 2.0, 3.0], [rows[0], widened[-1]]) == [[1.0], [2.0, 3.0]]
    assert _split([1.0, 2.0], rows[:2]) == [[1.0], [2.0]]


def test_a_result_already_in_read_back_form_is_kept_and_equals_the_json_round_trip():
    import json

    from stereoset_eval.scoring.records import SentenceResult

    plain = SentenceResult(score=-1.5, n_tokens=2, token_ids=(3, 4), token_logprobs=(-0.5, -1.0), extra={"w": "x"})
    nested = SentenceResult(score=-1.5, n_tokens=2, token_ids=(3, 4), token_logprobs=(-0.5, -1.0),
                            extra={"spans": ((1, 2),)})
    for result in (plain, nested):
        (fast,) = SentenceResult.through_json([result])
        assert fast == SentenceResult.from_json(json.loads(json.dumps(result.to_json())))
    assert SentenceResult.through_json([plain])[0] is plain  # nothing to convert: no copy
    assert SentenceResult.through_json([nested])[0].extra == {"spans": [[1, 2]]}  # tuples become lists, as read back
