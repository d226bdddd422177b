"""``stereoset-eval curate`` on the real gender items: outputs, card, round trip, determinism."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.cli.main import main
from stereoset_eval.curation.export import BMNE_COLUMNS, pairs_frame
from stereoset_eval.curation.rules import RULES_VERSION
from stereoset_eval.curation.loaders.pairs_csv import load_pairs

FILES = ("README.md", "pairs.csv", "pairs.parquet", "rules_summary.csv", "rules_summary_curated.csv",
         "removed.csv", "provenance.json", "reliability.csv", "decision_records.jsonl", "review_items.jsonl", "statistics/lengths.csv", "statistics/jaccard.csv",
         "statistics/counts.csv", "statistics/categories.csv", "statistics/categories.png",
         "statistics/statistics.json", "hf_dataset/dataset_dict.json", "hf_dataset/train/state.json",
         "lm_eval_task/stereoset_eval_curated.yaml", "lm_eval_task/utils.py")


def cli_args(ids_csv: Path, crows_csv: Path, out: Path, *, draft: bool = True) -> list[str]:
    """``draft``: accept every suggestion (``--min-precision 0 --unmeasured decide``), so the export holds
    the full proposal these format tests read; the precision-first default is tested apart."""
    return ["curate", "--benchmark", "stereoset", "--data", str(ids_csv), "--benchmark", "crows-pairs",
            "--data", str(crows_csv), "--bias-type", "gender", "--output", str(out),
            *(["--min-precision", "0", "--unmeasured", "decide"] if draft else [])]


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory, ids_csv, crows_csv) -> Path:
    out = tmp_path_factory.mktemp("curated") / "v1"
    assert main(cli_args(ids_csv, crows_csv, out)) == 0
    return out


def test_outputs_exist(out_dir: Path) -> None:
    for name in FILES:
        assert (out_dir / name).is_file(), name
    assert not [p for p in out_dir.parent.iterdir() if p.name.startswith(".")]  # no temporary leftovers


def test_counts_are_consistent(out_dir: Path) -> None:
    pairs = pd.read_csv(out_dir / "pairs.csv", dtype=str, keep_default_na=False)
    counts = pd.read_csv(out_dir / "statistics" / "counts.csv").set_index("source")
    removed = pd.read_csv(out_dir / "removed.csv", dtype=str, keep_default_na=False)
    assert counts.loc["stereoset-intra", "source_pairs"] == 255
    assert counts.loc["crows-pairs", "source_pairs"] == 262
    assert counts["curated"].sum() == len(pairs)
    assert (pairs.groupby("source").size() == counts["curated"]).all()
    assert set(removed["status"]) <= {"removed"} and (removed["reason"] != "").all()
    assert set(removed["decided_by"].str.split(":").str[0]) <= {"rule", "judge", "review"}
    assert set(pairs["decided_by"].str.split(":").str[0]) <= {"rule", "judge", "review"}
    # every source pair is in the dataset, in the removed table or in the review queue (a rule holds it)
    queue = [json.loads(line) for line in (out_dir / "review_items.jsonl").read_text().splitlines()]
    queued = {q["id"].split("#", 1)[0] for q in queue}
    seen = set(pairs["source"] + "/" + pairs["source_id"]) | set(removed["source_id"])
    assert not seen & queued - {s for s in seen if s in set(pairs["source"] + "/" + pairs["source_id"])}
    assert len(seen | queued) == 255 + 262
    assert list(pairs.columns[:5]) == list(BMNE_COLUMNS)
    assert set(pairs["stereo_antistereo"]) == {"stereo", "antistereo"}
    assert set(pairs["bias_type"]) == {"gender"}
    crows = pairs[pairs["source"] == "crows-pairs"]
    assert not crows["source_id"].eq("crows:709").any()


def test_rule_table_and_card(out_dir: Path) -> None:
    rules = pd.read_csv(out_dir / "rules_summary.csv").set_index("rule")
    assert set(rules["kind"]) == {"mechanical", "judgement"}
    assert {"effect", "stage", "decisions", "reliability_n", "reliability_lower"} <= set(rules.columns)
    assert rules.loc["known_erratum", "flagged"] == 1 and rules["failures"].sum() == 0
    card = (out_dir / "README.md").read_text(encoding="utf-8")
    assert "license: cc-by-sa-4.0" in card and "CC BY-SA 4.0" in card
    assert f"rules version {RULES_VERSION}" in card and "sha256" in card and "83.45" in card
    prov = json.loads((out_dir / "provenance.json").read_text())
    assert {i["benchmark"] for i in prov["inputs"]} == {"stereoset", "crows-pairs"}
    assert "timestamp" not in json.dumps(prov)


def test_pairs_round_trip(out_dir: Path, ids_csv: Path, crows_csv: Path) -> None:
    from stereoset_eval.curation.loaders.registry import detect_format, load_items

    items = load_pairs(out_dir / "pairs.csv")
    assert detect_format(out_dir / "pairs.csv") == "pairs-csv"
    assert [it.id for it in load_items("pairs", out_dir / "pairs.parquet")] == [it.id for it in items]
    frame = pairs_frame(items)
    original = pd.read_csv(out_dir / "pairs.csv", dtype=str, keep_default_na=False)
    # everything but the columns that name the file the items were read from, and the run's routing
    # (decided_by, confidence: a property of the run, not of the item)
    same = [c for c in original.columns if not c.startswith("source_") and c not in ("decided_by", "confidence")]
    as_csv = frame[same].astype(object).where(frame[same].notna(), "").astype(str)  # CSV has no nulls
    pd.testing.assert_frame_equal(as_csv, original[same])
    assert items[0].provenance.format == "pairs-csv" and items[0].provenance.note.startswith("curated from")
    from stereoset_eval.curation.gender_swap import original_text
    from stereoset_eval.curation.loaders.crows import load_crows_pairs

    crows = {it.id: it for it in load_crows_pairs(crows_csv)}
    for it in items:
        if it.id.startswith("crows-pairs/") and it.provenance.edits:
            role, text = original_text(it, "sent_less")
            assert text == crows[it.provenance.derived_from].text(role)


def test_hf_dataset_matches_csv(out_dir: Path) -> None:
    import datasets

    dd = datasets.load_from_disk(str(out_dir / "hf_dataset"))
    assert isinstance(dd, datasets.DatasetDict) and list(dd) == ["train"]
    ds = dd["train"]
    csv = pd.read_csv(out_dir / "pairs.csv", dtype=str, keep_default_na=False)
    assert ds.column_names == list(csv.columns) and ds.num_rows == len(csv)
    assert ds[0]["sent_more"] == csv.loc[0, "sent_more"]


def test_every_format_has_the_same_column_types(out_dir: Path) -> None:
    """CSV, parquet and the HF dataset agree cell by cell once CSV's empty fields are read as nulls."""
    import datasets

    from stereoset_eval.curation.export_schema import COLUMNS, NULLABLE

    parquet = pd.read_parquet(out_dir / "pairs.parquet")
    hf = datasets.load_from_disk(str(out_dir / "hf_dataset"))["train"].to_pandas()
    csv = pd.read_csv(out_dir / "pairs.csv", dtype={"source_row": "Int64"}, keep_default_na=False,
                      na_values={c: [""] for c in NULLABLE})
    assert list(parquet.columns) == list(hf.columns) == list(csv.columns) == list(COLUMNS)
    assert "flags" not in parquet.columns  # would shadow DataFrame.flags
    assert str(parquet["source_row"].dtype) == "Int64" and parquet["source_row"].notna().all()
    assert hf["source_row"].dtype.kind == "i"
    for column in COLUMNS:
        a, b, c = parquet[column].astype(object), hf[column].astype(object), csv[column].astype(object)
        for x, y, z in zip(a, b, c, strict=True):
            nulls = (pd.isna(x), pd.isna(y), pd.isna(z))
            assert nulls in ((True,) * 3, (False,) * 3), (column, x, y, z)
            if not nulls[0]:
                assert str(x) == str(y) == str(z), (column, x, y, z)
    assert parquet["category"].isna().sum() == (csv["category"].isna()).sum()


def test_load_dataset_reads_the_export_folder(out_dir: Path, tmp_path: Path) -> None:
    """The card's ``configs:`` block lets ``datasets.load_dataset(folder)`` pick pairs.parquet only."""
    import datasets

    # a private cache: the shared ~/.cache keys local folders by name, and another run's
    # /tmp/pytest-of-*/…/curated0/v1 can be served instead of this one
    dd = datasets.load_dataset(str(out_dir), cache_dir=str(tmp_path / "hf_cache"))
    assert list(dd) == ["train"]
    assert dd["train"].num_rows == len(pd.read_parquet(out_dir / "pairs.parquet"))


def test_lm_eval_task_scores_like_lm_evals_crows_pairs(out_dir: Path) -> None:
    """The task file's settings and helpers, run as lm-eval would run them (lm-eval itself is optional)."""
    import importlib.util

    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
    task = yaml.load((out_dir / "lm_eval_task" / "stereoset_eval_curated.yaml").read_text(), Loader=Loader)
    assert task["target_delimiter"] == "" and task["doc_to_text"] == "" and task["output_type"] == "multiple_choice"
    assert task["custom_dataset"] == ("function", "utils.load_pairs")
    spec = importlib.util.spec_from_file_location("lm_eval_task_utils", out_dir / "lm_eval_task" / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    ds = utils.load_pairs(version=1.0)["train"]
    doc = ds[0]
    assert utils.doc_to_choice(doc) == [doc["sent_more"], doc["sent_less"]]
    assert utils.process_results(doc, [(-10.0, False), (-12.5, False)]) == {"likelihood_diff": 2.5, "pct_stereotype": 1.0}
    assert utils.process_results(doc, [(-12.5, False), (-10.0, False)])["pct_stereotype"] == 0.0


def test_second_run_is_byte_identical(out_dir: Path, ids_csv: Path, crows_csv: Path, tmp_path: Path) -> None:
    out2 = tmp_path / "v2"
    env = dict(os.environ, PYTHONHASHSEED="12345", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    # only the curate command is registered: the other commands' imports are not needed here
    code = ("import argparse, sys; from stereoset_eval.cli.commands import curate; p = argparse.ArgumentParser(); "
            "curate.register(p.add_subparsers()); a = p.parse_args(sys.argv[1:]); sys.exit(a.func(a))")
    subprocess.run([sys.executable, "-c", code, *cli_args(ids_csv, crows_csv, out2)], check=True, env=env,
                   capture_output=True)
    files1 = sorted(p.relative_to(out_dir) for p in out_dir.rglob("*") if p.is_file())
    files2 = sorted(p.relative_to(out2) for p in out2.rglob("*") if p.is_file())
    assert files1 == files2
    for rel in files1:
        assert (out_dir / rel).read_bytes() == (out2 / rel).read_bytes(), rel


def test_cli_errors_are_one_line(capsys, tmp_path: Path, crows_csv: Path) -> None:
    assert main(["curate", "--benchmark", "crows-pairs", "--data", str(crows_csv), "--bias-type", "race",
                 "--output", str(tmp_path / "x")]) == 2
    assert "unknown bias type for curation" in capsys.readouterr().err
    assert main(["curate", "--benchmark", "crows-pairs", "--data", str(tmp_path / "missing.csv"),
                 "--output", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


def test_load_pairs_reports_bad_rows(tmp_path: Path) -> None:
    from stereoset_eval.foundation.errors import DataFormatError

    bad = tmp_path / "bad.csv"
    bad.write_text("sent_more,sent_less,stereo_antistereo,bias_type,category,source_id\n"
                   "A man.,A woman.,sideways,gender,,x\n", encoding="utf-8")
    with pytest.raises(DataFormatError, match="row 1, field 'stereo_antistereo'"):
        load_pairs(bad)
    bmne = tmp_path / "bmne.csv"
    bmne.write_text("sent_less,sent_more,stereo_antistereo,bias_type,category\n"
                    "Blue was the favorite color of the random female.,Blue was the favorite color of the random male.,"
                    "stereo,gender,Attitudes and Beliefs\n", encoding="utf-8")
    [item] = load_pairs(bmne)
    assert item.id == "pairs:1" and item.dimension == "Attitudes and Beliefs" and item.text("sent_more").endswith("male.")


def test_report_on_the_own_export_excludes_untagged_pairs_by_default(out_dir: Path, tmp_path: Path, capsys) -> None:
    """`report --benchmark pairs` on this toolkit's export works with its defaults: untagged pairs are left out
    of pair ss and balanced ss alike (counted, said in the report), and no rounding is recorded for a metric that
    never rounds."""
    import zlib

    items = load_pairs(out_dir / "pairs.csv")
    untagged = [i for i in items if not i.dimension]
    assert untagged, "the fixture export has untagged pairs"
    scores = tmp_path / "scores.csv"
    lines = ["sentence_id,score"] + [f"{s.id},{-(zlib.crc32(s.id.encode()) % 1000) / 100}" for i in items
                                     for s in i.sentences]
    scores.write_text("\n".join(lines) + "\n", encoding="utf-8")
    base = ["report", "--benchmark", "pairs", "--data", str(out_dir / "pairs.csv"), "--scores", str(scores),
            "--bootstrap", "50"]
    assert main([*base, "--out", str(tmp_path / "r")]) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    options = report["provenance"]["options"]
    assert "ndigits" not in options
    assert options["balance_by"] == "dimension" and options["missing_group"] == "exclude"
    assert options["untagged"] == len(untagged)
    rows = {r["metric"]: r for r in json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))}
    assert rows["pair ss"]["n"] == rows["balanced ss (dimension)"]["n"] == len(items) - len(untagged)
    notes = [n for s in report["sections"] for t in s["tables"] for n in t["notes"]]
    assert any(f"{len(untagged)} pair(s) without a dimension value were left out" in n for n in notes)
    assert main([*base, "--out", str(tmp_path / "own"), "--missing-group", "own-group"]) == 0
    own = {r["metric"]: r for r in json.loads((tmp_path / "own" / "results.json").read_text(encoding="utf-8"))}
    assert own["pair ss"]["n"] == len(items)
    assert main([*base, "--out", str(tmp_path / "err"), "--missing-group", "error"]) == 2
    assert "--missing-group" in capsys.readouterr().err
