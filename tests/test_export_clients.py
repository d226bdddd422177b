"""The curated export read by its real clients: pandas, Hugging Face ``datasets`` and lm-eval.

A small export (the first CrowS-Pairs gender rows, every rule deciding — ``--unmeasured
decide`` — so it has rows) is written by ``stereoset-eval curate`` and then read as a user
would:

* pandas reads ``pairs.csv`` and ``pairs.parquet`` into the same table (the CSV's formula-safe
  apostrophe aside, which the card documents);
* ``datasets.load_dataset(<export folder>)`` finds ``pairs.parquet`` through the card's YAML
  ``configs`` block, and ``load_from_disk(<export>/hf_dataset)`` holds the same rows;
* lm-eval runs the exported task (``--include_path <export>/lm_eval_task``) on the tiny GPT-2
  fixture: each sentence's log-likelihood equals ``causal-ll``'s, and its ``pct_stereotype``
  equals our pair ss on the same pairs (``report --missing-group own-group``, so that no pair is
  left out: lm-eval counts them all). Skipped when lm-eval is not installed (the ``test`` extra
  installs it).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from stereoset_eval.cli.main import main
from stereoset_eval.foundation.csv_safe import starts_formula

N_ROWS = 40  # CrowS-Pairs gender rows curated: about as many pairs, a few seconds each client


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory, crows_csv: Path) -> Path:
    base = tmp_path_factory.mktemp("export-clients")
    rows = pd.read_csv(crows_csv, index_col=0)
    small = base / "crows_gender_head.csv"
    rows[rows.bias_type == "gender"].head(N_ROWS).to_csv(small)
    out = base / "curated"
    assert main(["curate", "--benchmark", "crows-pairs", "--data", str(small), "--unmeasured", "decide",
                 "--output", str(out)]) == 0
    return out


def _table(export: Path) -> pd.DataFrame:
    table = pd.read_parquet(export / "pairs.parquet")
    assert len(table) >= 10, f"the small export has only {len(table)} pairs"
    return table


def test_pandas_reads_the_csv_and_the_parquet_alike(export: Path) -> None:
    parquet = _table(export)
    csv = pd.read_csv(export / "pairs.csv", dtype=str, keep_default_na=False)
    assert list(csv.columns) == list(parquet.columns) and len(csv) == len(parquet)
    for column in parquet.columns:
        for row, (text, value) in enumerate(zip(csv[column], parquet[column])):
            if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
                assert text == "", (column, row, text)
            elif isinstance(value, str):
                assert text == ("'" + value if starts_formula(value) else value), (column, row)
            else:
                assert float(text) == pytest.approx(float(value)), (column, row, text, value)
    assert parquet.sent_more.map(type).eq(str).all() and (parquet.sent_more != parquet.sent_less).all()


def test_datasets_loads_the_folder_through_the_card_configs(export: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    card = (export / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "configs:" in card.split("\n---\n", 1)[0]
    parquet = _table(export)
    loaded = datasets.load_dataset(str(export), cache_dir=str(tmp_path / "hf-cache"))
    assert list(loaded) == ["train"]
    train = loaded["train"]
    assert train.num_rows == len(parquet) and train.column_names == list(parquet.columns)
    assert train["id"] == parquet["id"].tolist() and train["sent_more"] == parquet["sent_more"].tolist()
    on_disk = datasets.load_from_disk(str(export / "hf_dataset"))["train"]
    assert on_disk["id"] == train["id"] and on_disk["sent_less"] == train["sent_less"]


def test_lm_eval_runs_the_exported_task_and_agrees_with_pair_ss(export: Path, models_dir: Path,
                                                                tmp_path: Path) -> None:
    lm_eval = pytest.importorskip("lm_eval", reason="lm-eval is not installed (pip install -e '.[test]')")
    from lm_eval.tasks import TaskManager

    from stereoset_eval.curation.loaders.pairs_csv import load_pairs

    model = str(models_dir / "tiny-gpt2")
    scored = tmp_path / "scores"
    assert main(["score", "--benchmark", "pairs", "--data", str(export / "pairs.parquet"), "--model", model,
                 "--method", "causal-ll", "--no-cache", "--no-progress", "--output", str(scored)]) == 0
    # include_defaults=False: lm-eval's own ~10k task files are not indexed (40 s), only the export's task
    out = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={model},dtype=float32", tasks=["stereoset_eval_curated"],
        task_manager=TaskManager(include_path=str(export / "lm_eval_task"), include_defaults=False),
        log_samples=True, device="cpu", batch_size=8,
    )
    samples = sorted(out["samples"]["stereoset_eval_curated"], key=lambda s: s["doc_id"])
    items = load_pairs(export / "pairs.parquet")
    assert len(samples) == len(items) == len(_table(export))
    ours = pd.read_csv(scored / "scores.csv")
    by_sentence = dict(zip(ours.sentence_id, ours.score))
    for sample, item in zip(samples, items, strict=True):
        assert sample["doc"]["sent_more"] == item.text("sent_more")
        (ll_more, _), (ll_less, _) = (r[0] for r in sample["resps"])
        assert ll_more == pytest.approx(by_sentence[item.sentence("sent_more").id], abs=3e-5)
        assert ll_less == pytest.approx(by_sentence[item.sentence("sent_less").id], abs=3e-5)

    report = tmp_path / "report"
    assert main(["report", "--benchmark", "pairs", "--data", str(export / "pairs.parquet"), "--scores",
                 str(scored / "scores.csv"), "--missing-group", "own-group", "--bootstrap", "1",
                 "--output", str(report)]) == 0
    rows = json.loads((report / "results.json").read_text(encoding="utf-8"))
    pair_ss = next(r for r in rows if r["metric"] == "pair ss")
    pct = out["results"]["stereoset_eval_curated"]["pct_stereotype,none"]
    assert pair_ss["n"] == len(items)
    assert 100.0 * pct == pytest.approx(pair_ss["value"], abs=1e-9), (pct, pair_ss)
