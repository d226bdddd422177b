"""The agreement measurement (curation/gold_eval.py) and the precision gate on the expert gold.

The gate curates the real gender items of StereoSet dev and CrowS-Pairs and cross-fits the rules'
reliability on ``../shared/data/curation-gold/gold_dev.csv`` (5 hash folds: an item is routed and
graded only with estimates fitted on the other folds). It prints the risk-coverage table and fails
when the automatic decisions at the default ``min_precision`` agree with the expert on fewer than
95 % of the items, or when the estimated precision is more than 5 points from the measured one.
In-sample figures are never asserted: they hold only on the items they were fitted on.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.curation import gold_eval as ge

DATASETS = ("stereoset", "crows")


def test_kappa_known_values():
    assert ge.cohen_kappa(["a", "a", "b", "b"], ["a", "a", "b", "b"]) == 1.0
    assert ge.cohen_kappa(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == -1.0
    assert ge.cohen_kappa(["a", "a", "b", "b"], ["a", "a", "b", "a"]) == 0.5
    assert math.isnan(ge.cohen_kappa(["a", "a"], ["a", "a"]))


def _gold_rows():
    base = dict.fromkeys(ge.GOLD_COLUMNS, "")
    rows = [
        {**base, "dataset": "stereoset", "source_id": "stereoset-intra/x1", "decision": "keep", "instance": "m",
         "instance_status": "kept", "sent_more": "She is kind.", "sent_less": "He is kind.",
         "dimension": "Personality Traits"},
        {**base, "dataset": "stereoset", "source_id": "stereoset-intra/x1", "decision": "keep", "instance": "l",
         "instance_status": "dropped", "drop_reason": "no stereotype"},
        {**base, "dataset": "stereoset", "source_id": "stereoset-intra/x2", "decision": "remove",
         "remove_reason": "not_gender"},
        {**base, "dataset": "crows", "source_id": "crows:3", "decision": "keep", "instance": "as_is",
         "instance_status": "kept", "sent_more": "Women cook.", "sent_less": "Men cook.",
         "dimension": "Roles and Behaviors"},
    ]
    return rows


def _gold_file(tmp_path: Path, rows) -> Path:
    p = tmp_path / "gold.csv"
    pd.DataFrame(rows, columns=list(ge.GOLD_COLUMNS)).to_csv(p, index=False)
    return p


def test_evaluate_counts_every_kind_of_disagreement(tmp_path):
    gold = ge.load_gold(_gold_file(tmp_path, _gold_rows()))
    pairs = pd.DataFrame([
        {"id": "stereoset-intra/x1#m", "sent_more": "She is kind.", "sent_less": "He is kind.",
         "category": "Attitudes and Beliefs", "pitfalls": ""},
        {"id": "stereoset-intra/x1#l", "sent_more": "He is mean.", "sent_less": "She is mean.",
         "category": "Personality Traits", "pitfalls": ""},
        {"id": "stereoset-intra/x2#m", "sent_more": "The old man.", "sent_less": "The old woman.",
         "category": "", "pitfalls": ""},
        {"id": "crows-pairs/crows:3", "sent_more": "Women cook.", "sent_less": "Men cook.",
         "category": "Roles and Behaviors", "pitfalls": ""},
    ])
    removed = pd.DataFrame([{"item_id": "stereoset-intra/x2#l", "status": "removed", "rule": "other_group_marker",
                             "reason": "age"}])
    rep = ge.evaluate(pairs, removed, gold, folds=1)
    st = rep.table.set_index("dataset").loc["stereoset"]
    assert st["items_kept_ours"] == 2 and st["items_kept_gold"] == 1
    assert st["instances_ours"] == 3 and st["instances_gold"] == 1
    assert st["exact_pairs"] == 1 and st["instances_both_keep"] == 1
    kinds = set(zip(rep.disagreements["kind"], rep.disagreements["item"]))
    assert ("item", "stereoset-intra/x2") in kinds
    assert ("instance", "stereoset-intra/x1") in kinds
    assert ("dimension", "stereoset-intra/x1") in kinds
    cr = rep.table.set_index("dataset").loc["crows"]
    assert cr["exact_pair_rate"] == 1.0 and cr["instances_ours"] == 1
    assert rep.confusion["stereoset"].loc["Personality Traits", "Attitudes and Beliefs"] == 1


def test_bad_gold_is_one_clear_line(tmp_path):
    rows = _gold_rows()
    rows[0]["decision"] = "maybe"
    with pytest.raises(ge.GoldFormatError, match=r"gold.csv:2: decision 'maybe'"):
        ge.load_gold(_gold_file(tmp_path, rows))
    p = tmp_path / "short.csv"
    p.write_text("dataset,source_id\nstereoset,x\n")
    with pytest.raises(ge.GoldFormatError, match="missing column"):
        ge.load_gold(p)


def test_folds_are_stable():
    assert ge.fold_of("crows:1") == ge.fold_of("crows:1")
    assert {ge.fold_of(f"crows:{i}") for i in range(20)} == {0, 1}


@pytest.fixture(scope="module")
def curated(data_dir, request):
    gold_path = data_dir / "curation-gold" / "gold_dev.csv"
    if not gold_path.is_file():
        pytest.skip(f"expert gold not found at {gold_path}")
    # StereoSet dev + CrowS-Pairs curated with the default settings: the session's shared run (conftest.py)
    return request.getfixturevalue("curated_real"), gold_path


@pytest.fixture(scope="module")
def cross_fitted(curated):
    from stereoset_eval.curation.reviewed import load_reviews
    from stereoset_eval.curation.risk_coverage import cross_fit_table, summary_markdown

    result, gold_path = curated
    table = cross_fit_table(result.records, load_reviews([gold_path]), k=5, thresholds=(0.8, 0.9, 0.95))
    print("\n" + summary_markdown(table))
    return table


@pytest.mark.parametrize("dataset", DATASETS)
def test_precision_gate_cross_fitted_on_expert_gold(cross_fitted, dataset):
    row = cross_fitted[(cross_fitted["dataset"] == dataset) & (cross_fitted["min_precision"] == 0.95)].iloc[0]
    assert row["items"] > 100 and row["automatic"] > 0  # the rules decide some items alone
    assert row["item_measured"] >= 0.95  # and those decisions agree with the expert
    assert abs(row["item_estimated"] - row["item_measured"]) <= 0.05  # the estimate is calibrated
    for comp in ("instance", "text", "dimension"):
        if row[f"{comp}_n"]:
            assert row[f"{comp}_measured"] >= 0.9, comp


def test_coverage_falls_as_the_precision_asked_rises(cross_fitted):
    for dataset in DATASETS:
        cov = cross_fitted[cross_fitted["dataset"] == dataset].sort_values("min_precision")["coverage"].tolist()
        assert cov == sorted(cov, reverse=True)


def test_curate_eval_command_writes_the_tables(data_dir, tmp_path, capsys):
    from stereoset_eval.cli.main import main

    out = tmp_path / "cur"
    gold = data_dir / "curation-gold" / "gold_dev.csv"
    assert main(["curate", "--benchmark", "crows-pairs", "--data",
                 str(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv"), "--output", str(out),
                 "--gold", str(gold)]) == 0
    assert "Agreement with an expert gold" in (out / "README.md").read_text()
    assert main(["curate-eval", str(out), "--gold", str(gold), "--write", str(tmp_path / "ge")]) == 0
    text = capsys.readouterr().out
    assert "item_kappa" in text and "largest kinds of disagreement" in text and "risk-coverage" in text
    summary = pd.read_csv(tmp_path / "ge" / "summary.csv")
    assert list(summary["dataset"]) == ["crows"]
    assert (tmp_path / "ge" / "disagreements.csv").is_file()
    rc = pd.read_csv(tmp_path / "ge" / "risk_coverage.csv")
    assert set(rc["min_precision"]) == {0.8, 0.9, 0.95, 0.99} and (rc["coverage"] >= 0).all()


def test_calibration_on_a_gold_half_the_estimates_never_saw(data_dir, tmp_path, capsys):
    """Reviewed: one hash half of gold_dev.csv; graded: the other half. The run's estimates route the unseen
    half, and the estimated agreement of its automatic decisions stands next to the measured one."""
    from stereoset_eval.cli.main import main
    from stereoset_eval.curation.gold_eval import fold_of

    gold = data_dir / "curation-gold" / "gold_dev.csv"
    if not gold.is_file():
        pytest.skip(f"expert gold not found at {gold}")
    df = pd.read_csv(gold, dtype=str, keep_default_na=False)
    half = df["source_id"].map(lambda s: fold_of(s, 2))
    seen, unseen = tmp_path / "seen.csv", tmp_path / "unseen.csv"
    df[half == 0].to_csv(seen, index=False)
    df[half == 1].to_csv(unseen, index=False)
    out = tmp_path / "cur"
    assert main(["curate", "--benchmark", "stereoset", "--data", str(data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv"),
                 "--benchmark", "crows-pairs", "--data", str(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv"),
                 "--output", str(out), "--reviewed", str(seen)]) == 0
    assert main(["curate-eval", str(out), "--gold", str(unseen), "--cross-fit", "0", "--write", str(tmp_path / "ge")]) == 0
    print(capsys.readouterr().out.split("risk-coverage", 1)[1])
    rc = pd.read_csv(tmp_path / "ge" / "risk_coverage.csv")
    assert set(rc["mode"]) == {"estimates from the run's reviewed items, gold items it did not review"}
    at = rc[rc["min_precision"] == 0.95].set_index("dataset")
    for dataset in ("stereoset", "crows"):
        r = at.loc[dataset]
        assert r["items"] == (half == 1)[df["dataset"] == dataset].groupby(df["source_id"]).first().sum()
        if r["automatic"]:
            assert r["item_measured"] >= 0.95 and abs(r["item_estimated"] - r["item_measured"]) <= 0.05
