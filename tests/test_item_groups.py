"""Commit groups keep an item's units together where they share inputs (issue 35): StereoSet's
three options share their first masked context, and that input runs once, not once per group."""

from __future__ import annotations

from stereoset_eval.scoring.api import score_items
from stereoset_eval.scoring.requests import plan_groups

BATCH_TOKENS = 256  # small groups, so that sorting units alone would split the examples


def _distinct_inputs(prepared: list) -> int:
    return len({(r.input_ids, r.token_type_ids) for p in prepared for r in p.requests})


def test_stereoset_mlm_runs_each_shared_input_once(stereoset_items) -> None:
    from stereoset_eval.scoring.fake import load_fake_backend
    from stereoset_eval.scoring.methods import get_method

    items = [it for it in stereoset_items if it.task == "intrasentence"][:60]
    spec = get_method("stereoset-mlm")
    assert spec.item_shares_inputs
    tok = load_fake_backend("fake:masked", kind="masked", dtype="float32").tokenizer
    options = spec.resolve(tok, spec.validate_options(None))
    units = spec.units(items, options)
    with tok.memoized({}):
        prepared = [spec.prepare(u, tok, options) for u in units]
    requests = [p.requests for p in prepared]

    def rows_run(groups: list[list[int]]) -> int:
        return sum(len({(r.input_ids, r.token_type_ids) for i in g for r in requests[i]}) for g in groups)

    assert rows_run(plan_groups(requests, BATCH_TOKENS)) > _distinct_inputs(prepared)  # units alone: split examples
    assert rows_run(plan_groups(requests, BATCH_TOKENS, items=[u.item_id for u in units])) == _distinct_inputs(prepared)
    result = score_items(items, model="fake:masked", method="stereoset-mlm", batch_tokens=BATCH_TOKENS, use_cache=False)
    assert result.provenance["run"]["execution"]["rows_computed"] == _distinct_inputs(prepared)

