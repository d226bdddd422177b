"""Exports safe to open (issue 33): a sentence starting with a formula character is flagged at
load, written as text in CSV (leading apostrophe), and kept exact in parquet, HF datasets, JSON
and when ``pairs.csv`` is read back."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, strategies as st

from stereoset_eval.curation.export import write_csv
from stereoset_eval.curation.loaders.crows import load_crows_pairs
from stereoset_eval.curation.loaders.pairs_csv import load_pairs
from stereoset_eval.foundation.csv_safe import escape_cell, starts_formula, unescape_cell

LINK = '=HYPERLINK("http://example.invalid/x","click") '


@given(st.text(alphabet=st.sampled_from("=+-@'\t\r0123456789.eE aZ\"\n,"), max_size=12) | st.text(max_size=12))
def test_escape_is_reversible_and_never_leaves_a_formula(text: str) -> None:
    cell = escape_cell(text)
    assert unescape_cell(cell) == text
    assert not starts_formula(cell)


@pytest.mark.parametrize("text, cell", [
    ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-x", "'-x"), ("@SUM(A1)", "'@SUM(A1)"), ("\t=1", "'\t=1"),
    ("-3", "-3"), ("+1.5e-3", "+1.5e-3"),  # plain numbers are numbers, not formulas
    ("'=1", "''=1"), ("'Twas", "'Twas"), ("He ran.", "He ran."), ("", ""),
])
def test_the_leading_apostrophe_convention(text: str, cell: str) -> None:
    assert escape_cell(text) == cell and unescape_cell(cell) == text


def test_write_csv_escapes_text_cells_only(tmp_path: Path) -> None:
    write_csv(pd.DataFrame({"s": ["=1+1", "ok"], "n": [-1.5, 2.0]}), tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text(encoding="utf-8") == "s,n\n'=1+1,-1.5\nok,2.0\n"


@pytest.fixture(scope="module")
def crows_formula(tmp_path_factory, data_dir: Path) -> Path:
    df = pd.read_csv(data_dir / "crows-pairs" / "crows_pairs_anonymized.csv", index_col=0)
    gender = df[df.bias_type == "gender"].head(12).copy()
    for side in ("sent_more", "sent_less"):  # the same prefix on both sides: still a minimal pair
        gender.iloc[0, gender.columns.get_loc(side)] = LINK + gender.iloc[0][side]
    path = tmp_path_factory.mktemp("formula") / "crows.csv"
    gender.to_csv(path)
    return path


def test_the_sentence_is_flagged_at_load_with_its_evidence(crows_formula: Path) -> None:
    items = load_crows_pairs(crows_formula)
    flags = [f for it in items for f in it.flags if f.rule == "formula_start"]
    assert [f.evidence["role"] for f in flags] == ["sent_more", "sent_less"]
    assert all(f.severity == "warning" and f.evidence["character"] == "=" and f.evidence["sentence"].startswith(LINK)
               for f in flags)


def test_exports_write_it_as_text_in_csv_and_exact_elsewhere(crows_formula: Path, tmp_path: Path) -> None:
    from datasets import load_from_disk

    from stereoset_eval.curation.export import pairs_frame, write_hf_dataset, write_parquet

    frame = pairs_frame(load_crows_pairs(crows_formula))
    write_csv(frame, tmp_path / "pairs.csv")
    write_parquet(frame, tmp_path / "pairs.parquet")
    write_hf_dataset(frame, tmp_path / "hf_dataset")
    raw = (tmp_path / "pairs.csv").read_text(encoding="utf-8")
    assert raw.count("'=HYPERLINK") == 2 and "\n=HYPERLINK" not in raw and ",=HYPERLINK" not in raw
    parquet = pd.read_parquet(tmp_path / "pairs.parquet")
    assert parquet.sent_more.str.startswith("=HYPERLINK").sum() == parquet.sent_less.str.startswith("=HYPERLINK").sum() == 1
    hf = load_from_disk(str(tmp_path / "hf_dataset"))["train"]
    assert sum(s.startswith("=HYPERLINK") for s in list(hf["sent_more"]) + list(hf["sent_less"])) == 2
    flagged = [json.loads(f) for f in parquet.item_flags if "formula_start" in f]
    assert len(flagged) == 1 and [f["evidence"]["role"] for f in flagged[0] if f["rule"] == "formula_start"] == \
        ["sent_more", "sent_less"]
    back, exact = load_pairs(tmp_path / "pairs.csv"), load_pairs(tmp_path / "pairs.parquet")
    assert [(it.id, it.text("sent_more"), it.text("sent_less")) for it in back] == \
        [(it.id, it.text("sent_more"), it.text("sent_less")) for it in exact]
    assert [it.text("sent_more") for it in back] == list(frame.sent_more)


def test_the_card_counts_them(crows_formula: Path) -> None:
    """The card's line counts the curated pairs that carry the flag (here: the loaded pairs themselves)."""
    import dataclasses

    from stereoset_eval.curation.card import dataset_card
    from stereoset_eval.curation.pipeline import CurationConfig, curate_files

    result = curate_files([("crows-pairs", crows_formula)], config=CurationConfig(bias_type="gender"))
    result = dataclasses.replace(result, items=load_crows_pairs(crows_formula))
    card = dataset_card(result, version="t")
    assert "formula character (`=`, `+`, `-`, `@`): 1 curated pairs" in card
    assert "leading apostrophe" in card
