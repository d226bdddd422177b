"""Per-model results -> long score table and the pre/post-balance table."""

from __future__ import annotations

import pytest

from stereoset_eval.analysis.correlation import CorrelationInputError, balance_table, correlation_by_category
from stereoset_eval.analysis.pair_metrics import balanced_ss, pair_ss
from stereoset_eval.analysis.report_build import ModelResults
from stereoset_eval.analysis.study_tables import long_scores, pre_post_scores
from stereoset_eval.analysis.toy_items import pair_item, pair_scores


def model(name, shift):
    items, scores = [], {}
    for i in range(12):
        pid = f"{name}{i}"
        items.append(pair_item(pid, dimension=["A", "B"][i % 2], source="curated"))
        scores.update(pair_scores(pid, -float((i * shift) % 5), -float(i % 3 + shift % 2)))
    bal = balanced_ss(items, scores)
    return ModelResults(
        model=name, pair_ss={"X": pair_ss(items, scores), "Y": pair_ss(items, scores)}, balanced={"X": bal, "Y": bal}
    )


def test_long_scores_and_per_category_correlation():
    models = [model(f"m{k}", k) for k in range(1, 5)]
    table = long_scores(models)
    assert set(table.columns) == {"model", "benchmark", "category", "value"}
    row = table[(table.model == "m1") & (table.benchmark == "X") & (table.category == "all")]
    assert len(row) == 1 and row.value.item() == models[0].pair_ss["X"].value
    per = correlation_by_category(table, "X", "Y")
    assert set(per) == {"A", "B", "all", "balanced"}
    assert all(c.n == 4 for c in per.values())


def test_pre_post_scores_feed_balance_table():
    models = [model(f"m{k}", k) for k in range(1, 5)]
    df = pre_post_scores(models, "X", "Y")
    assert list(df.columns) == ["model", "x_pre", "y_pre", "x_post", "y_post"]
    assert df.x_post.tolist() == [m.balanced["X"].balanced.value for m in models]
    bt = balance_table(df)
    assert bt.pre.n == 4
    with pytest.raises(CorrelationInputError, match="Z"):
        pre_post_scores(models, "X", "Z")
