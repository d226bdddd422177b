"""Masked copies as arrays (issue 35): a sentence's copies as one request, run as int codes, give
the same inputs, gathers, rows and numbers as one request per copy."""

from __future__ import annotations

import numpy as np
import pytest

from stereoset_eval.scoring.copies import CopyBatch, CopyTable, MaskedCopies
from stereoset_eval.scoring.engine import RunStats, execute
from stereoset_eval.scoring.engine_rows import CopyRows, RequestRows
from stereoset_eval.scoring.methods import get_method
from stereoset_eval.scoring.methods.base import Prepared
from stereoset_eval.scoring.methods.pll import mask_sets, mask_spans
from stereoset_eval.scoring.requests import group_coded_units, group_units, merge_requests

MASKED_METHODS = ("pll", "pll-word-l2r", "crows-nangia")


def test_masked_copies_are_the_requests_they_stand_for_and_check_their_spans():
    copies = MaskedCopies((2, 10, 11, 12, 3), (1, 2, 3), (3, 3, 4), mask_id=4)
    assert len(copies) == 3
    assert [(r.input_ids, r.gather) for r in copies.requests()] == [
        ((2, 4, 4, 12, 3), ((1, 10),)), ((2, 10, 4, 12, 3), ((2, 11),)), ((2, 10, 11, 4, 3), ((3, 12),))]
    for starts, stops in (((1,), (1,)), ((0,), (6,)), ((-1,), (1,)), ((1, 2), (2,))):
        with pytest.raises(ValueError):
            MaskedCopies((2, 10, 11, 12, 3), starts, stops, mask_id=4)
    with pytest.raises(ValueError, match="as long as input_ids"):
        MaskedCopies((2, 10, 3), (1,), (2,), mask_id=4, token_type_ids=(0, 0))
    assert len(MaskedCopies((2, 3), (), (), mask_id=4).requests()) == 0  # a pair with no shared token


def test_unchecked_copies_are_checked_by_the_table_that_codes_them_and_by_their_requests():
    """MaskedCopies.unchecked skips the per-object checks; a table coding a run's copies checks every
    span at once (the same error), and requests() checks its own."""
    good = MaskedCopies.unchecked((2, 10, 11, 3), (1, 2), (3, 3), mask_id=4)
    assert good == MaskedCopies((2, 10, 11, 3), (1, 2), (3, 3), mask_id=4)
    assert CopyTable().codes_of([good]).tolist() == CopyTable().codes_of([MaskedCopies((2, 10, 11, 3), (1, 2), (3, 3), mask_id=4)]).tolist()
    for starts, stops in (((1,), (1,)), ((0,), (6,)), ((-1,), (1,)), ((2, 1), (3, 1)), ((1, 2), (2,)), ((1,), (2, 3))):
        bad = MaskedCopies.unchecked((2, 10, 11, 12, 3), starts, stops, mask_id=4)
        with pytest.raises(ValueError, match="as long as each other|non-empty and inside"):
            CopyTable().codes_of([good, bad])
        with pytest.raises(ValueError, match="as long as each other|non-empty and inside"):
            bad.requests()


def test_mask_spans_are_the_mask_sets_or_none_where_a_word_is_split():
    words = [None, 0, 0, 0, 1, 2, 2, None]
    positions = [1, 2, 3, 4, 5, 6]
    for l2r in (False, True):
        starts, stops = mask_spans(positions, words, within_word_l2r=l2r)
        assert [list(range(s, e)) for s, e in zip(starts, stops)] == mask_sets(positions, words, within_word_l2r=l2r)
    assert mask_spans([1, 2, 3], [None, 0, 1, 0], within_word_l2r=True) is None
    assert mask_spans([1, 2, 3], [None, 0, 1, 0], within_word_l2r=False) == ((1, 2, 3), (2, 3, 4))


def _prepared(method, items, backend):
    spec = get_method(method)
    tok = backend.tokenizer
    options = spec.resolve(tok, spec.validate_options(None))
    units = spec.units(items, options)
    with tok.memoized({}):
        prepared = [spec.prepare(u, tok, options) for u in units]
    return spec, options, units, prepared


def _run(spec, options, units, prepared, launch, **kwargs):
    stats = RunStats()
    results = execute(spec, units, prepared, [f"u{i}" for i in range(len(units))], options, launch,
                      batch_tokens=2048, cached={}, stats=stats, **kwargs)
    return results, stats


@pytest.mark.parametrize("method", MASKED_METHODS)
def test_copies_path_equals_one_request_per_copy_on_the_fake_model(method, crows_items):
    """Bit for bit on the fake model (its numbers hash the input): the same inputs and gathers, the
    same commit groups and as many forward rows and batches — copies of a pair's two sentences
    masked at the word they differ by are one row, as the general path merges them."""
    from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    items = crows_items[:150]
    spec, options, units, prepared = _prepared(method, items, backend)
    assert CopyRows.applies(prepared)
    as_requests = [Prepared(p.requests, p.state) for p in prepared]
    assert not CopyRows.applies(as_requests)
    launch = FakeScorer(backend).launch
    by_group = {"commit": lambda fresh: None}  # group by group, as with a cache (without, one launch: below)
    copies, copy_stats = _run(spec, options, units, prepared, launch, **by_group)
    general, general_stats = _run(spec, options, units, as_requests, launch, **by_group)
    assert copies == general and not copy_stats.one_launch
    assert (copy_stats.rows_computed, copy_stats.batches) == (general_stats.rows_computed, general_stats.batches)
    space = CopyRows(prepared, CopyTable())
    groups = space.groups(2048, None, 64)
    assert groups == RequestRows(as_requests).groups(2048, None, 64)
    per_group = [len(merge_requests(r for i in g for r in as_requests[i].requests)) for g in groups]
    assert copy_stats.rows_computed == sum(per_group)  # each group runs each distinct input once
    if method != "crows-nangia":  # pairs masked at the word they differ by: the merge is exercised
        assert sum(per_group) < sum(len(space.unit_codes[i]) for g in groups for i in g)


@pytest.mark.parametrize("method", MASKED_METHODS)
def test_a_run_without_commits_runs_its_groups_as_one_launch(method, crows_items):
    """Without a cache, a device to overlap or a progress bar, every commit group's rows are cut into
    batches together: the same results (bit for bit on the fake model, whose numbers hash the input),
    each distinct input once, fewer batches, and fewer of them mixing lengths (an attention mask)."""
    from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    spec, options, units, prepared = _prepared(method, crows_items[:150], backend)
    scorer = FakeScorer(backend)
    mixed: list[bool] = []

    def launch(batch):
        lengths = {len(row.input_ids) for row in batch}
        mixed.append(len(lengths) > 1)
        return scorer.launch(batch)

    once, once_stats = _run(spec, options, units, prepared, launch)
    once_mixed, mixed[:] = sum(mixed), []
    by_group, group_stats = _run(spec, options, units, prepared, launch, commit=lambda fresh: None)
    assert once_stats.one_launch and not group_stats.one_launch
    assert once == by_group
    assert once_stats.rows_computed == len(merge_requests(r for p in prepared for r in Prepared(p.requests, p.state).requests))
    assert once_stats.rows_computed <= group_stats.rows_computed and once_stats.batches < group_stats.batches
    assert once_mixed < sum(mixed)
    with_bar, bar_stats = _run(spec, options, units, prepared, launch, progress=True)  # the bar moves group by group
    assert with_bar == once and not bar_stats.one_launch and bar_stats.batches == group_stats.batches


@pytest.mark.parametrize("method", MASKED_METHODS)
def test_a_run_without_commits_reduces_its_units_once_with_the_same_results(method, crows_items):
    """With nothing to commit (no cache) and no device to overlap, the engine reduces every unit in
    one reduction at the end; with a commit, group by group. The same results either way, and the
    commits still come group by group."""
    from dataclasses import replace

    from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    spec, options, units, prepared = _prepared(method, crows_items[:40], backend)
    calls: list[int] = []

    def counted(columns, rows, flats, opts):
        calls.append(len(rows))
        return spec.reduce_rows(columns, rows, flats, opts)

    counting = replace(spec, reduce_rows=counted)
    launch = FakeScorer(backend).launch
    once, _ = _run(counting, options, units, prepared, launch)
    assert calls == [len(units)]
    calls.clear()
    commits: list[int] = []
    by_group, stats = _run(counting, options, units, prepared, launch, commit=lambda fresh: commits.append(len(fresh)))
    assert len(calls) == len(commits) > 1 and sum(commits) == len(units)
    assert by_group == once
    calls.clear()
    overlapped, _ = _run(counting, options, units, prepared, launch, overlap=True)  # CUDA: reduced while the next group runs
    assert len(calls) > 1 and overlapped == once


def test_copies_path_on_a_real_model_equals_the_general_path_to_float32_noise(models_dir, crows_items):
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.scorers import Scorer

    backend = load_backend(str(models_dir / "tiny-roberta"), kind="masked", device="cpu")
    spec, options, units, prepared = _prepared("crows-nangia", crows_items[:60], backend)
    launch = Scorer(backend).launch
    copies, _ = _run(spec, options, units, prepared, launch)
    general, _ = _run(spec, options, units, [Prepared(p.requests, p.state) for p in prepared], launch)
    for a, b in zip(copies, general):
        for x, y in zip(a, b):
            assert x.token_ids == y.token_ids
            assert x.token_logprobs == pytest.approx(y.token_logprobs, abs=1e-5)


def test_shared_values_are_reused_by_code_only_with_the_table_that_made_them(crows_items):
    """Every crows-nangia copy is a pll copy: with the run's one table and store, crows-nangia runs
    nothing. Given a store but no table the run takes the general path (codes of another table
    would mean other inputs), and its values still agree."""
    from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    items = crows_items[:80]
    launch = FakeScorer(backend).launch
    table, store = CopyTable(), {}
    _run(*_prepared("pll", items, backend), launch, shared=store, copy_table=table)
    crows = _prepared("crows-nangia", items, backend)
    reused, stats = _run(*crows, launch, shared=store, copy_table=table)
    assert stats.rows_computed == 0 and stats.rows_reused > 0
    alone, alone_stats = _run(*crows, launch, shared={})
    assert alone == reused and alone_stats.rows_computed > 0


@pytest.mark.parametrize("seed", range(6))
def test_grouping_int_keys_with_arrays_gives_the_groups_of_the_set_rule(seed):
    """group_coded_units counts the keys that occur once instead of keeping them in a set: the same
    groups as group_units, with keys shared across units, repeated within a unit, items that join
    units, empty units, and keys that are large codes or small slots."""
    rng = np.random.default_rng(seed)
    n_units = int(rng.integers(1, 60))
    pool = int(rng.integers(5, 400))  # few distinct keys: many shared; many: mostly once
    unit_keys = [rng.integers(0, pool, size=int(rng.integers(0, 12))).tolist() for _ in range(n_units)]
    lengths = rng.integers(1, 40, size=n_units).tolist()
    offsets = np.concatenate(([0], np.cumsum([len(k) for k in unit_keys]))).astype(np.int64)
    flat = np.array([k for keys in unit_keys for k in keys], dtype=np.int64)
    items = [f"item{int(i)}" for i in rng.integers(0, max(1, n_units // 2), size=n_units)]
    for budget in (8, 40, 200, 2000):
        for given in (None, items):
            expected = group_units(lengths, unit_keys, budget, given)
            assert group_coded_units(lengths, flat, offsets, budget, given) == expected
            assert group_coded_units(lengths, (flat << 40) | 7, offsets, budget, given) == expected  # codes: not slots
    assert sorted(i for g in group_coded_units(lengths, flat, offsets, 40) for i in g) == list(range(n_units))


@pytest.mark.parametrize("method", MASKED_METHODS)
def test_merges_made_with_the_groups_are_each_groups_distinct_codes(method, crows_items):
    """CopyRows.groups makes every group's merge in one sort; a group's merge (and that of part of
    a group, as when some of its units were cached) is the sorted distinct codes of its copies."""
    from stereoset_eval.scoring.fake import load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    _, _, _, prepared = _prepared(method, crows_items[:80], backend)
    space = CopyRows(prepared, CopyTable())
    groups = space.groups(512, None, 64)
    assert len(groups) > 3
    codes = space.unit_codes
    for plan in groups:
        for todo in (plan, plan[1:], plan[:1]):
            if todo:
                assert space.merge(list(todo)).tolist() == sorted({c for i in todo for c in codes[i]})


def test_equal_hashes_never_merge_unequal_inputs(monkeypatch):
    table = CopyTable()
    a = MaskedCopies((2, 10, 11, 3), (1, 2), (2, 3), mask_id=4)
    b = MaskedCopies((2, 12, 11, 3), (1, 2), (2, 3), mask_id=4)  # differs from a at position 1 only
    codes = np.array(sorted(table.codes(a) + table.codes(b)), dtype=np.int64)
    expected = {c: min(d for d in codes.tolist() if table.request(d).input_ids == table.request(c).input_ids)
                for c in codes.tolist()}
    assert dict(zip(codes.tolist(), table.representatives(codes).tolist())) == expected
    assert len(set(expected.values())) == 3  # masked at position 1, a and b are one input
    shape = table._prefix_suffix_hashes()[0].shape
    monkeypatch.setattr(table, "_prefix_suffix_hashes", lambda: (np.zeros(shape, np.uint64),) * 2)
    assert dict(zip(codes.tolist(), table.representatives(codes).tolist())) == expected  # compared exactly


def test_inputs_of_other_token_types_are_other_inputs(monkeypatch):
    """Copies with the same masked ids but other token types (or none) are not one input, as the
    request path keys rows by ids and token types."""
    table = CopyTable()
    kinds = [MaskedCopies((2, 10, 11, 3), (1,), (2,), mask_id=4),
             MaskedCopies((2, 12, 11, 3), (1,), (2,), mask_id=4, token_type_ids=(0, 0, 0, 0)),
             MaskedCopies((2, 13, 11, 3), (1,), (2,), mask_id=4, token_type_ids=(0, 0, 1, 1)),
             MaskedCopies((2, 14, 11, 3), (1,), (2,), mask_id=4, token_type_ids=(0, 0, 0, 0))]
    codes = np.array([c for k in kinds for c in table.codes(k)], dtype=np.int64)
    shape = table._prefix_suffix_hashes()[0].shape
    monkeypatch.setattr(table, "_prefix_suffix_hashes", lambda: (np.zeros(shape, np.uint64),) * 2)
    assert table.representatives(codes).tolist() == [codes[0], codes[1], codes[2], codes[1]]


def test_a_copy_batch_slices_and_iterates_as_its_rows():
    table = CopyTable()
    a = MaskedCopies((2, 10, 11, 3), (1, 2), (2, 3), mask_id=4)
    b = MaskedCopies((2, 12, 11, 3), (1, 2), (2, 3), mask_id=4)
    c = MaskedCopies((2, 13, 3), (1,), (2,), mask_id=4)
    codes = np.array(sorted(table.codes(a) + table.codes(b) + table.codes(c)), dtype=np.int64)
    rows = CopyRows([Prepared(copies=(a,)), Prepared(copies=(b,)), Prepared(copies=(c,))], table)
    (batch,) = rows.batches(codes, 10_000, 64)
    assert isinstance(batch, CopyBatch) and len(batch) == 4 and len(batch.read_codes) == 5
    general = merge_requests(r for m in (a, b, c) for r in m.requests())
    assert sorted((r.input_ids, r.gather) for r in batch) == sorted((r.input_ids, r.gather) for r in general)
    listed = list(batch)
    for start, stop in ((0, 2), (1, 4), (2, 3), (0, 4)):
        assert list(batch[start:stop]) == listed[start:stop]
    ids, attention, _, positions, gather_rows, targets = batch.arrays(pad_id=0)
    assert attention is not None and ids.shape == (4, 4)  # c is one token shorter: padded, masked out
    for row, (pos, target) in zip(gather_rows.tolist(), zip(positions[gather_rows].tolist(), targets.tolist())):
        assert (pos, target) in listed[row].gather


@pytest.mark.parametrize("method, options_given", [(m, {}) for m in MASKED_METHODS] + [("crows-nangia", {"round_ndigits": None})])
def test_reduce_rows_of_copies_is_reduce_of_each_unit(method, options_given, crows_items):
    """The copies path reduces a commit group in one ``reduce_rows`` call (states as columns, each
    unit's copies' values as one list); it must return, unit by unit, what ``reduce`` returns."""
    import random

    from stereoset_eval.scoring.engine_rows import _state_columns
    from stereoset_eval.scoring.fake import load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    spec, options, units, prepared = _prepared(method, crows_items[:80], backend)
    options = {**options, **options_given}
    rng = random.Random(7)
    flats = [[-rng.random() * 12 for _ in p.requests] for p in prepared]
    rows = list(range(len(units)))[::-1]  # any order of units
    together = spec.reduce_rows(_state_columns(prepared), rows, [flats[i] for i in rows], options)
    one_by_one = [spec.reduce(units[i], prepared[i], [[v] for v in flats[i]], options) for i in rows]
    assert together == one_by_one
    assert all(r.token_logprobs == tuple(flats[i][:len(r.token_logprobs)]) for i, rs in zip(rows, together) for r in rs[:1])


def test_a_table_keeps_the_values_runs_read_and_merges_them_between_runs():
    """What ``known_values`` gives: every code a run marked known, sorted, the latest run's value
    winning; values a run fills after keeping its arrays are seen at the next merge."""
    table = CopyTable()
    assert [a.tolist() for a in table.known_values()] == [[], []]
    codes = np.array([3, 5, 9], dtype=np.int64)
    values, known = np.zeros(3), np.zeros(3, dtype=bool)
    table.keep_values(codes, values, known)
    values[[0, 2]], known[[0, 2]] = (-1.5, -2.5), True  # filled after it was kept, as a run fills it
    assert [a.tolist() for a in table.known_values()] == [[3, 9], [-1.5, -2.5]]
    table.keep_values(np.array([1, 9], dtype=np.int64), np.array([-0.5, -7.0]), np.array([True, True]))
    assert [a.tolist() for a in table.known_values()] == [[1, 3, 9], [-0.5, -1.5, -7.0]]


def test_copy_rows_read_what_runs_before_them_kept_and_never_reduce_an_unread_value(crows_items):
    from stereoset_eval.scoring.fake import FakeScorer, load_fake_backend

    backend = load_fake_backend("fake:masked", kind="masked")
    spec, options, units, prepared = _prepared("pll", crows_items[:40], backend)
    table = CopyTable()
    first = CopyRows(prepared, table, share=True)
    rows = first.merge(range(len(units)))
    assert len(first.reuse(rows, {}, {}, RunStats())) == len(rows)  # nothing known yet
    with pytest.raises(AssertionError, match="before it was read back"):
        first.flats([0])
    launch = FakeScorer(backend).launch
    for batch in first.batches(rows, 2048, 64):
        first.read(batch, launch(batch), {}, None)
    expected = first.flats(list(range(len(units))))
    second = CopyRows(prepared, table, share=True)  # the next method of the run on the same table
    stats = RunStats()
    assert len(second.reuse(second.merge(range(len(units))), {}, {}, stats)) == 0
    assert stats.rows_reused == len(rows)
    assert second.flats(list(range(len(units)))) == expected
    alone = CopyRows(prepared, table)  # sharing off: the table's values are not read
    assert len(alone.reuse(rows, {}, {}, RunStats())) == len(rows)
