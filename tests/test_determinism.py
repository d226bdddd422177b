"""Determinism: the same command twice gives byte-identical results; batch size does not matter.

* ``score`` run twice (each computing, with its own cache) and a third time from the cache:
  ``scores.csv``, ``scores.json`` and ``predictions.json`` are byte-identical, and
  ``provenance.json`` differs only inside each part's ``run`` block (creation time, wall
  time, cache use, threads) — the one volatile field.
* Scores do not depend on ``batch_tokens`` beyond 1e-5 (a budget of one or two inputs per
  batch, hence other padding and other batch neighbours, against the default).
* ``report`` run twice: ``report.json``, ``.md`` and ``.html`` are byte-identical apart from
  the provenance ``timestamp``; the bootstrap seed is recorded and changing it changes the CIs.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from conftest import float32_noise

from stereoset_eval.cli.main import main

N_INTRA, N_INTER, N_CROWS = 8, 4, 12
SMALL_BUDGET = 40  # padded tokens per batch: one or two inputs per batch, against hundreds at 8192


@pytest.fixture(scope="module")
def small_stereoset(tmp_path_factory, ids_csv: Path) -> Path:
    """The first intra- and intersentence examples of the dev ids CSV (all three sentences each)."""
    with open(ids_csv, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    keep: dict[str, list[str]] = {"intrasentence": [], "intersentence": []}
    for r in rows:
        ids = keep[r["dataset_type"]]
        if r["cluster_id"] not in ids and len(ids) < (N_INTRA if r["dataset_type"] == "intrasentence" else N_INTER):
            ids.append(r["cluster_id"])
    chosen = {c for ids in keep.values() for c in ids}
    dest = tmp_path_factory.mktemp("data") / "stereoset_small.csv"
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(r for r in rows if r["cluster_id"] in chosen)
    return dest


@pytest.fixture(scope="module")
def small_crows(tmp_path_factory, crows_csv: Path) -> Path:
    with open(crows_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    dest = tmp_path_factory.mktemp("data") / "crows_small.csv"
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows[: N_CROWS + 1])
    return dest


def score(benchmark: str, data: Path, model: Path, out: Path, cache: Path, *extra: str) -> Path:
    argv = ["score", "--benchmark", benchmark, "--data", str(data), "--model", str(model), "--output", str(out),
            "--cache-dir", str(cache), "--no-progress", *extra]
    assert main(argv) == 0
    return out


def without_run_blocks(provenance: dict) -> dict:
    """The provenance minus each part's ``run`` block (the one place allowed to differ)."""
    doc = json.loads(json.dumps(provenance))
    for part in doc["runs"].values():
        assert "created_at" in part.pop("run")
        assert "created_at" not in json.dumps(part), "a timestamp outside the run block"
    return doc


@pytest.mark.parametrize("benchmark", ["stereoset", "crows-pairs"])
def test_score_twice_is_byte_identical(benchmark, small_stereoset, small_crows, models_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    data = small_stereoset if benchmark == "stereoset" else small_crows
    model = models_dir / "tiny-bert"
    a = score(benchmark, data, model, tmp_path / "a", tmp_path / "cache-a")
    b = score(benchmark, data, model, tmp_path / "b", tmp_path / "cache-b")
    c = score(benchmark, data, model, tmp_path / "c", tmp_path / "cache-a")  # every sentence from the cache
    files = ["scores.csv", "scores.json"] + (["predictions.json"] if benchmark == "stereoset" else [])
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), f"{name} differs between two computing runs"
        assert (a / name).read_bytes() == (c / name).read_bytes(), f"{name} differs when read from the cache"
    provs = [json.loads((d / "provenance.json").read_text()) for d in (a, b, c)]
    assert without_run_blocks(provs[0]) == without_run_blocks(provs[2])
    cache_free = [without_run_blocks(p) for p in provs[:2]]
    assert cache_free[0] == cache_free[1]
    runs_c = provs[2]["runs"]
    assert all(r["run"]["computed"] == 0 and r["run"]["cache_hits"] > 0 for r in runs_c.values())


def _numbers(score_set) -> dict[str, list[float]]:
    """Every number of every record: score, unrounded sums, per-token log-probabilities."""
    out = {}
    for r in score_set.records:
        vals = [r.score] + list(r.token_logprobs or ())
        if isinstance(r.extra.get("unrounded"), float):
            vals.append(r.extra["unrounded"])
        out[r.sentence_id] = vals
    return out


@pytest.mark.parametrize(("model", "method", "benchmark"), [
    ("tiny-bert", "stereoset-mlm", "stereoset"),
    ("tiny-bert", "stereoset-nsp", "stereoset"),
    ("tiny-roberta", "crows-nangia", "crows-pairs"),
    ("tiny-gpt2", "causal-ll", "crows-pairs"),
])
def test_scores_do_not_depend_on_batch_size(model, method, benchmark, small_stereoset, small_crows, models_dir,
                                            monkeypatch):
    from stereoset_eval.curation.loaders.registry import load_items
    from stereoset_eval.scoring.api import score_items

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    items = load_items(benchmark, small_stereoset if benchmark == "stereoset" else small_crows)
    if method == "stereoset-mlm":
        items = [i for i in items if i.task == "intrasentence"]
    elif method == "stereoset-nsp":
        items = [i for i in items if i.task == "intersentence"]
    items = items[:2] if method == "crows-nangia" else items  # ~60 inputs per pair: keep it quick
    runs = {bt: score_items(items, model=str(models_dir / model), method=method, device="cpu", batch_tokens=bt,
                            use_cache=False) for bt in (8192, SMALL_BUDGET)}
    big, one = _numbers(runs[8192]), _numbers(runs[SMALL_BUDGET])
    assert big.keys() == one.keys() and big
    worst = max(float32_noise(x, y) for sid in big for x, y in zip(big[sid], one[sid], strict=True))
    assert worst <= 1e-5, f"{method}: batch size changes a number by {worst:.2e} (1e-5 + 1e-7 relative units)"
    assert all(math.isfinite(x) for v in big.values() for x in v)


def _report(data: Path, scores: Path, out: Path, *extra: str) -> dict[str, bytes]:
    argv = ["report", "--benchmark", "stereoset", "--data", str(data), "--scores", str(scores), "--out", str(out),
            "--bootstrap", "200", *extra]
    assert main(argv) == 0
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _without_timestamp(files: dict[str, bytes]) -> dict[str, bytes]:
    stamp = json.loads(files["report.json"])["provenance"]["timestamp"].encode()
    assert stamp
    return {name: data.replace(stamp, b"<timestamp>") for name, data in files.items()}


def test_report_twice_is_byte_identical_and_records_its_seed(small_stereoset, models_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    scores = score("stereoset", small_stereoset, models_dir / "tiny-bert", tmp_path / "scores", tmp_path / "cache")
    first = _report(small_stereoset, scores / "predictions.json", tmp_path / "r1")
    second = _report(small_stereoset, scores / "predictions.json", tmp_path / "r2")
    assert set(first) >= {"report.json", "report.md", "report.html"}
    assert _without_timestamp(first) == _without_timestamp(second)

    doc = json.loads(first["report.json"])
    assert doc["provenance"]["options"]["bootstrap"]["seed"] == 0
    reseeded = _report(small_stereoset, scores / "predictions.json", tmp_path / "r3", "--seed", "7")
    doc7 = json.loads(reseeded["report.json"])
    assert doc7["provenance"]["options"]["bootstrap"]["seed"] == 7
    assert _strip(doc, "provenance") != _strip(doc7, "provenance"), "the seed does not reach the bootstrap"


def _strip(doc: dict, key: str) -> dict:
    return {k: v for k, v in doc.items() if k != key}
