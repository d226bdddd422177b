"""SentenceResult: the typed result of a method's reduce, stored in the cache in the legacy JSON shape."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from stereoset_eval.scoring.api import score_items
from stereoset_eval.scoring.records import SentenceResult

LEGACY_KEYS = ["score", "n_tokens", "token_ids", "token_logprobs", "extra"]


def test_json_round_trip_and_types():
    r = SentenceResult(score=-3.25, n_tokens=2, token_ids=(7, 9), token_logprobs=(-1.0, -2.25),
                       extra={"unrounded": -3.2501, "positions": [1, 2]})
    assert list(r.to_json()) == LEGACY_KEYS
    assert SentenceResult.from_json(r.to_json()) == r
    assert SentenceResult.through_json([r]) == [r]
    nan = SentenceResult.through_json([SentenceResult(score=float("nan"), n_tokens=0)])[0]
    assert math.isnan(nan.score) and nan.token_ids is None and nan.extra == {}


def test_a_value_written_by_the_old_dict_code_reads_back():
    """Text exactly as the dict-based engine stored a crows-nangia unit (json.dumps of its dicts)."""
    text = ('[{"score": -12.345, "n_tokens": 2, "token_ids": [1037, 2158], "token_logprobs": [-5.1, -7.245], '
            '"extra": {"unrounded": -12.345000001, "positions": [1, 2]}}, {"score": -11.0, "n_tokens": 2, '
            '"token_ids": [1037, 2158], "token_logprobs": [-5.0, -6.0], "extra": {"unrounded": -11.0, "positions": [1, 2]}}]')
    first, second = (SentenceResult.from_json(d) for d in json.loads(text))
    assert first == SentenceResult(score=-12.345, n_tokens=2, token_ids=(1037, 2158), token_logprobs=(-5.1, -7.245),
                                   extra={"unrounded": -12.345000001, "positions": [1, 2]})
    assert second.score == -11.0 and second.extra["positions"] == [1, 2]


def test_the_cache_keeps_the_legacy_shape_and_serves_legacy_entries(crows_csv, tmp_path):
    from stereoset_eval.curation.loaders.registry import load_items

    items = load_items("crows-pairs", crows_csv)[:6]
    first = score_items(items, model="fake:masked", method="crows-nangia", cache_dir=tmp_path)
    db = sqlite3.connect(tmp_path / "scores.sqlite3")
    rows = db.execute("SELECT key, value FROM results").fetchall()
    assert len(rows) == 6
    for _, value in rows:
        assert [list(d) for d in json.loads(value)] == [LEGACY_KEYS, LEGACY_KEYS]
    # rewrite every entry the way the dict-based engine wrote it (plain dicts, lists, a reordered extra)
    with db:
        for key, value in rows:
            legacy = [{"score": d["score"], "n_tokens": d["n_tokens"], "token_ids": d["token_ids"],
                       "token_logprobs": d["token_logprobs"], "extra": dict(reversed(list(d["extra"].items())))}
                      for d in json.loads(value)]
            db.execute("UPDATE results SET value=? WHERE key=?", (json.dumps(legacy, ensure_ascii=False), key))
    db.close()
    again = score_items(items, model="fake:masked", method="crows-nangia", cache_dir=tmp_path)
    assert again.cache_stats == {"hits": 12, "computed": 0}
    assert [r.to_dict() for r in again.records] == [r.to_dict() for r in first.records]


@pytest.mark.parametrize("method", ["pll", "crows-nangia"])
def test_computed_equals_cached(method, crows_csv, tmp_path):
    from stereoset_eval.curation.loaders.registry import load_items

    items = load_items("crows-pairs", crows_csv)[:4]
    computed = score_items(items, model="fake:masked", method=method, cache_dir=tmp_path)
    cached = score_items(items, model="fake:masked", method=method, cache_dir=tmp_path)
    assert cached.cache_stats["computed"] == 0 and cached.records == computed.records


def _by_text(result: SentenceResult) -> SentenceResult:
    """The round trip through JSON text that ``through_json`` shortcuts for plain values."""
    return SentenceResult.from_json(json.loads(json.dumps(result.to_json())))


def _same(a: object, b: object) -> bool:
    """Equal, with the same types all the way down (NaN equal to NaN, -0.0 distinct from 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, SentenceResult):
        return all(_same(getattr(a, f), getattr(b, f)) for f in ("score", "n_tokens", "token_ids", "token_logprobs")) \
            and _same(dict(a.extra), dict(b.extra))
    return a == b


@pytest.mark.parametrize("result", [
    SentenceResult(score=-3.25, n_tokens=2, token_ids=(7, 9), token_logprobs=(-1.0, -2.25),
                   extra={"unrounded": -3.2501, "positions": (1, 2), "nested": {"a": [(1.5, None), True, "é\ud800"]}}),
    SentenceResult(score=float("nan"), n_tokens=0, extra={"x": float("inf"), "y": -0.0, "z": float("-inf")}),
    SentenceResult(score=0.1 + 0.2, n_tokens=3, token_ids=[1, 2, 3], token_logprobs=[-0.1, -1e-300, -5e-324]),
    SentenceResult(score=True, n_tokens=1, token_ids=(True, 2), token_logprobs=(0, -1.5)),  # ints/bools where floats/ints go
    SentenceResult(score=-1.0, n_tokens=1, extra={1: "int key", None: "null key", 2.5: "float key"}),
    SentenceResult(score=2 ** 70, n_tokens=1, token_logprobs=(-1.0,), extra={"big": -(2 ** 80)}),
], ids=["tuples-nested", "non-finite", "lists", "mixed-numbers", "odd-keys", "big-ints"])
def test_through_json_equals_the_text_round_trip(result):
    (fast,) = SentenceResult.through_json([result])
    assert _same(fast, _by_text(result))


def test_through_json_of_numpy_values_is_the_real_round_trip():
    np = pytest.importorskip("numpy")
    result = SentenceResult(score=np.float64(-1.25), n_tokens=1, token_logprobs=(np.float64(-0.5),),
                            extra={"f": np.float64(0.1)})
    (fast,) = SentenceResult.through_json([result])
    assert _same(fast, _by_text(result)) and type(fast.score) is float
    with pytest.raises(TypeError):  # what json.dumps says of a numpy int: not silently kept
        SentenceResult.through_json([SentenceResult(score=1.0, n_tokens=1, token_ids=(np.int64(3),))])


def test_through_json_copies_what_reduce_may_still_hold():
    state = {"positions": [1, 2]}
    (fast,) = SentenceResult.through_json([SentenceResult(score=1.0, n_tokens=1, extra=state)])
    state["positions"].append(3)
    assert fast.extra["positions"] == [1, 2]


PLAIN = [SentenceResult(score=-0.5, n_tokens=2, token_ids=(3, 4), token_logprobs=(-0.25, -0.25), extra={"template_word": "x"}),
         SentenceResult(score=1, n_tokens=0, token_ids=(), token_logprobs=None, extra={})]


@pytest.mark.parametrize("odd", [
    SentenceResult(score=-3.25, n_tokens=2, token_ids=(7, 9), token_logprobs=(-1.0, -2.25), extra={"positions": (1, 2)}),
    SentenceResult(score=True, n_tokens=1, token_ids=(True, 2), token_logprobs=(0, -1.5)),
    SentenceResult(score=0.5, n_tokens=3, token_ids=[1, 2, 3], token_logprobs=[-0.1, -0.2, -0.3]),
    SentenceResult(score=-1.0, n_tokens=1, extra={1: "int key"}),
    SentenceResult(score=-1.0, n_tokens=1, token_logprobs=(-1,)),
], ids=["tuple-in-extra", "bools", "lists", "int-key", "int-logprob"])
def test_through_json_units_equals_each_units_round_trip(odd):
    """One result that is not already read-back form anywhere among the units: every unit takes the
    per-result path, and each equals its text round trip; with none, the units come back as they are."""
    units = [[PLAIN[0]], [PLAIN[1], odd], [PLAIN[0]]]
    got = SentenceResult.through_json_units(units)
    assert [len(u) for u in got] == [1, 2, 1]
    for unit_in, unit_out in zip(units, got):
        assert all(_same(a, _by_text(b)) for a, b in zip(unit_out, unit_in))
    plain = [[PLAIN[0]], [PLAIN[1]]]
    assert SentenceResult.through_json_units(plain) is plain
    assert all(_same(r, _by_text(r)) for r in PLAIN)


def test_of_makes_the_object_the_constructor_makes():
    from stereoset_eval.scoring.records import SentenceScore

    made = SentenceResult.of(-0.5, 2, (3, 4), (-0.25, -0.25), {"w": "x"})
    built = SentenceResult(score=-0.5, n_tokens=2, token_ids=(3, 4), token_logprobs=(-0.25, -0.25), extra={"w": "x"})
    assert made == built and made.__dict__ == built.__dict__ and list(made.__dict__) == list(built.__dict__)
    assert SentenceResult.of(1.0, 0) == SentenceResult(score=1.0, n_tokens=0)
    with pytest.raises(AttributeError):  # still frozen
        made.score = 1.0  # type: ignore[misc]
    score = SentenceScore.of("i", "s", "stereotype", -0.5, 2, (3,), (-0.5,), {})
    assert score == SentenceScore("i", "s", "stereotype", -0.5, 2, (3,), (-0.5,), {})
    assert list(score.__dict__) == list(SentenceScore("i", "s", "r", 0.0, 0).__dict__)


def test_through_json_units_copies_the_lists_of_scalars_in_extra_and_equals_each_round_trip():
    """``crows-nangia``'s results (positions as a list in ``extra``): rebuilt at once with copies of
    the lists, equal to each result's text round trip, sharing no list with what reduce holds."""
    held = [[1, 2, 3], [4, 5]]
    units = [[SentenceResult(score=-1.5, n_tokens=3, token_ids=(7, 8, 9), token_logprobs=(-0.5, -0.5, -0.5),
                             extra={"unrounded": -1.5, "positions": held[0]})],
             [SentenceResult(score=-2.0, n_tokens=2, token_ids=(1, 2), token_logprobs=(-1.0, -1.0),
                             extra={"unrounded": -2.0, "positions": held[1], "word": "x"}), PLAIN[0]]]
    got = SentenceResult.through_json_units(units)
    assert [len(u) for u in got] == [1, 2]
    for unit_in, unit_out in zip(units, got):
        assert all(_same(a, _by_text(b)) for a, b in zip(unit_out, unit_in))
    held[0].append(99)
    assert got[0][0].extra["positions"] == [1, 2, 3]
    assert got[1][0].extra["positions"] is not held[1]


def test_through_json_units_keeps_lists_a_method_made_for_each_result_and_still_checks_the_rest():
    """``fresh_lists`` (crows-nangia's): its lists of scalars are kept as they are, since no one else
    holds them; a result that is not plain (a tuple in extra) still takes its round trip."""
    units = [[SentenceResult(score=-1.5, n_tokens=3, extra={"unrounded": -1.5, "positions": [1, 2, 3]})], [PLAIN[0]]]
    got = SentenceResult.through_json_units(units, fresh_lists=True)
    assert got is units
    assert all(_same(a, _by_text(b)) for unit_in, unit_out in zip(units, got) for a, b in zip(unit_out, unit_in))
    odd = [[SentenceResult(score=-1.0, n_tokens=1, extra={"positions": (1, 2)})]]
    got = SentenceResult.through_json_units(odd, fresh_lists=True)
    assert got[0][0].extra["positions"] == [1, 2] and _same(got[0][0], _by_text(odd[0][0]))


def test_crows_nangia_makes_each_results_positions_anew():
    """What crows-nangia's fresh_lists promises: no two results, and not the pair's state, share a list."""
    from stereoset_eval.scoring.methods import get_method

    spec = get_method("crows-nangia")
    assert spec.fresh_lists
    template = ([0, 1, 2, 3], [0, 1, 2, 3])
    columns = {"ids": [([2, 10, 11, 3], [2, 10, 12, 3])] * 2, "template": [template] * 2, "n": [2, 2]}
    reduced = spec.reduce_rows(columns, [0, 1], [[-1.0, -2.0, -1.5, -2.5]] * 2, {"round_ndigits": 3})
    lists = [r.extra["positions"] for unit in reduced for r in unit]
    assert lists[0] == [1, 2] and len({id(x) for x in lists}) == 4
    assert all(x is not t for x in lists for t in template)


@pytest.mark.parametrize("extra", [{"positions": [1, (2, 3)]}, {"positions": [[1]]}, {"positions": (1, 2)},
                                   {"positions": [1, 2], "nested": {"a": 1}}])
def test_through_json_units_with_other_containers_in_extra_takes_each_results_round_trip(extra):
    units = [[SentenceResult(score=-1.0, n_tokens=1, extra=extra)], [PLAIN[0]]]
    got = SentenceResult.through_json_units(units)
    assert all(_same(a, _by_text(b)) for unit_in, unit_out in zip(units, got) for a, b in zip(unit_out, unit_in))


def test_unit_spec_of_makes_the_object_the_constructor_makes():
    from stereoset_eval.scoring.methods.base import UnitSpec

    made = UnitSpec.of("item", ("a", "b"), ("stereotype", "anti-stereotype"), {"sent1": "x", "sent2": "y"})
    built = UnitSpec("item", ("a", "b"), ("stereotype", "anti-stereotype"), {"sent1": "x", "sent2": "y"})
    assert made == built and list(made.__dict__) == list(built.__dict__)
    with pytest.raises(AttributeError):  # still frozen
        made.item_id = "other"  # type: ignore[misc]


def test_records_are_one_per_sentence_in_item_order_with_the_results_fields():
    """``_records`` makes one record per (unit sentence, result), in item order: scores made floats
    (an int or None score too), ``extra`` copied; a unit with fewer results than sentences gives
    records for the results it has."""
    import math

    from types import SimpleNamespace

    from stereoset_eval.scoring.api import _records
    from stereoset_eval.scoring.methods.base import UnitSpec
    from stereoset_eval.scoring.records import SentenceScore

    def item(n: int) -> SimpleNamespace:  # what _records reads of an Item: its id and its sentences' ids and roles
        return SimpleNamespace(id=f"i{n}", sentences=(SimpleNamespace(id=f"s{n}a", role="stereotype"),
                                                      SimpleNamespace(id=f"s{n}b", role="anti-stereotype")))

    items = [item(0), item(1)]
    units = [UnitSpec(it.id, (s.id,), (s.role,), {}) for it in items for s in it.sentences]
    extra = {"w": "x"}
    results = [[SentenceResult(-1.5, 2, (1, 2), (-0.5, -1.0), extra)], [SentenceResult(0, 1)],
               [SentenceResult(None, 0)], [SentenceResult(-2.0, 1, extra={"k": [1]})]]  # type: ignore[arg-type]
    got = _records(items, units, results)
    assert [r.sentence_id for r in got] == ["s0a", "s0b", "s1a", "s1b"]
    assert got[0] == SentenceScore("i0", "s0a", "stereotype", -1.5, 2, (1, 2), (-0.5, -1.0), {"w": "x"})
    assert got[0].extra is not extra
    assert type(got[1].score) is float and got[1].score == 0.0 and math.isnan(got[2].score)
    assert got[3].extra == {"k": [1]} and got[3].role == "anti-stereotype" and got[3].item_id == "i1"
    short = _records(items, units, results[:3] + [[]])  # the last unit returned nothing
    assert [r.sentence_id for r in short] == ["s0a", "s0b", "s1a"]


# every method that says plain_rows, run on a fixture model with a real tokenizer (first items of its data)
PLAIN_ROWS_RUNS = {"pll": ("tiny-bert", "crows"), "pll-word-l2r": ("tiny-roberta", "crows"),
                   "crows-nangia": ("tiny-bert", "crows"), "stereoset-mlm": ("tiny-roberta", "intra"),
                   "stereoset-causal": ("tiny-gpt2", "intra"), "causal-ll": ("tiny-gpt2", "crows")}


def test_every_plain_rows_method_is_run_here():
    from stereoset_eval.scoring.methods import METHODS

    assert {name for name, spec in METHODS.items() if spec.plain_rows} == set(PLAIN_ROWS_RUNS)


@pytest.mark.parametrize("method", sorted(PLAIN_ROWS_RUNS))
def test_plain_rows_results_are_what_the_cache_reads_back(method, models_dir, crows_items, stereoset_items, monkeypatch):
    """What ``Method.plain_rows`` promises, on real runs: every result ``reduce_rows`` returns equals its
    round trip through JSON text with the same types all the way down, and lists in ``extra`` are the
    result's own (the engine then skips ``through_json_units``)."""
    import dataclasses

    import stereoset_eval.scoring.api as api
    from stereoset_eval.scoring.methods import get_method

    model, data = PLAIN_ROWS_RUNS[method]
    items = crows_items[:25] if data == "crows" else [it for it in stereoset_items if it.task == "intrasentence"][:25]
    spec = get_method(method)
    made: list[list[SentenceResult]] = []

    def reduce_rows(*args: object) -> list[list[SentenceResult]]:
        out = spec.reduce_rows(*args)  # type: ignore[misc]
        made.extend(out)
        return out

    monkeypatch.setattr(api, "get_method", lambda name: dataclasses.replace(get_method(name), reduce_rows=reduce_rows))
    computed = score_items(items, model=str(models_dir / model), method=method, use_cache=False)
    flat = [r for unit in made for r in unit]
    assert len(flat) == len(computed.records) > 0
    assert all(_same(r, _by_text(r)) for r in flat)
    lists = [v for r in flat for v in r.extra.values() if isinstance(v, list)]
    assert len({id(v) for v in lists}) == len(lists) and (not lists or spec.fresh_lists)
    assert all(_same(a, b) for a, b in zip(flat, SentenceResult.through_json(flat)))
