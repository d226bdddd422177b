"""The agreement measurement (curation/gold_eval.py) and the quality gate on the expert gold.

The gate curates the real gender items of StereoSet dev and CrowS-Pairs, measures them against
``../shared/data/curation-gold/gold_dev.csv``, prints the table and fails below the levels in
:data:`GATE` (the levels reached by the current rules, see docs/curation.md; the issue's targets
are :data:`stereoset_eval.curation.gold_eval.TARGETS`).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.curation import gold_eval as ge

# per benchmark: (item κ, instance κ, dimension κ, exact-pair rate, max count ratio error).
# Rules 2.2 reach every target of the issue (TARGETS: 0.6, 0.5, 0.6, 0.85, 0.15); see docs/curation.md.
GATE: dict[str, tuple[float, float, float, float, float]] = {
    "stereoset": (0.6, 0.5, 0.6, 0.85, 0.15),    # every target reached (0.66 / 0.56 / 0.82 / 90 % / 7 %)
    "crows": (0.6, 0.5, 0.6, 0.85, 0.15),        # every target reached (0.66 / 0.80 / 0.64 / 88 % / 0 %)
}


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
def gold_report(data_dir):
    from stereoset_eval.curation.export import pairs_frame
    from stereoset_eval.curation.pipeline import curate_files

    gold_path = data_dir / "curation-gold" / "gold_dev.csv"
    if not gold_path.is_file():
        pytest.skip(f"expert gold not found at {gold_path}")
    result = curate_files([("stereoset", data_dir / "stereoset" / "stereoset_dev_ids_ptbr_llm.csv"),
                           ("crows-pairs", data_dir / "crows-pairs" / "crows_pairs_anonymized.csv")])
    return ge.evaluate(pairs_frame(result.items), result.removed_table(), ge.load_gold(gold_path))


@pytest.mark.parametrize("dataset", sorted(GATE))
def test_quality_gate_on_expert_gold(gold_report, dataset):
    with pd.option_context("display.width", 200):
        print("\n" + gold_report.table.set_index("dataset").T.to_string())
        print(gold_report.per_fold.set_index(["fold", "dataset"]).T.to_string())
    item_k, inst_k, dim_k, exact, count_err = GATE[dataset]
    r = gold_report.table.set_index("dataset").loc[dataset]
    assert r["item_kappa"] >= item_k
    assert r["instance_kappa"] >= inst_k
    assert r["dimension_kappa"] >= dim_k
    assert r["exact_pair_rate"] >= exact
    assert r["count_ratio_error"] <= count_err


def test_curate_eval_command_writes_the_tables(gold_report, data_dir, tmp_path, capsys):
    from stereoset_eval.cli.main import main

    out = tmp_path / "cur"
    gold = data_dir / "curation-gold" / "gold_dev.csv"
    assert main(["curate", "--benchmark", "crows-pairs", "--data",
                 str(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv"), "--output", str(out),
                 "--gold", str(gold)]) == 0
    assert "Agreement with an expert gold" in (out / "README.md").read_text()
    assert main(["curate-eval", str(out), "--gold", str(gold), "--write", str(tmp_path / "ge")]) == 0
    text = capsys.readouterr().out
    assert "item_kappa" in text and "largest kinds of disagreement" in text
    summary = pd.read_csv(tmp_path / "ge" / "summary.csv")
    assert list(summary["dataset"]) == ["crows"]
    assert (tmp_path / "ge" / "disagreements.csv").is_file()
