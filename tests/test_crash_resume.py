"""Crash-safe scoring, for real: SIGKILL the ``score`` command mid-run, rerun it, compare.

The scoring engine commits each group of units (about one ``--batch-tokens`` budget) to the
SQLite cache in one transaction, in a fixed order that does not depend on what is cached.
So after a SIGKILL the cache holds exactly the first *j* groups, and the rerun of the same
command reads them (cache hits) and computes the rest — the work lost is the one group that
was in flight — and writes outputs byte-identical to an uninterrupted run.

The test runs ``python -m stereoset_eval.cli.main score`` three times on 40 real CrowS-Pairs rows with
the fixture ``tiny-bert``: once uninterrupted (reference), once killed with SIGKILL as soon
as the cache (polled read-only) holds a third of the units, and once more to resume. The
numbers are printed (run pytest with ``-s`` to see them) for the closing note.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
N_PAIRS = 40
BATCH_TOKENS = 2048
POLL_S = 0.01
DEADLINE_S = 240


def small_crows(crows_csv: Path, dest: Path, n: int = N_PAIRS) -> Path:
    with open(crows_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows[: n + 1])
    return dest


def score_cmd(data: Path, model: Path, out: Path, cache: Path) -> list[str]:
    return [sys.executable, "-m", "stereoset_eval.cli.main", "score", "--benchmark", "crows-pairs", "--data", str(data),
            "--model", str(model), "--output", str(out), "--cache-dir", str(cache),
            "--batch-tokens", str(BATCH_TOKENS), "--device", "cpu", "--no-progress"]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    # same threads in every run: float reductions then give bit-identical results
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TOKENIZERS_PARALLELISM="false")
    return env


def run_to_end(cmd: list[str]) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, f"score failed ({done.returncode}):\n{done.stderr[-3000:]}"
    return done


def committed_units(cache: Path) -> int:
    """Rows in the cache, read through a separate read-only connection (0 while it is being created)."""
    db = cache / "scores.sqlite3"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
        try:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:  # table not created yet, or a checkpoint in progress
        return 0


def kill_after(cmd: list[str], cache: Path, threshold: int) -> tuple[int, float]:
    """Start ``cmd``; SIGKILL it once the cache holds ``threshold`` units. Returns (units seen, seconds)."""
    proc = subprocess.Popen(cmd, cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    started = time.monotonic()
    try:
        while True:
            seen = committed_units(cache)
            if seen >= threshold:
                proc.send_signal(signal.SIGKILL)
                break
            if proc.poll() is not None:
                pytest.fail(f"score ended (rc {proc.returncode}) before {threshold} units were committed "
                            f"({seen} seen): {proc.stderr.read()[-2000:]}")
            if time.monotonic() - started > DEADLINE_S:
                proc.kill()
                pytest.fail(f"no {threshold} committed units after {DEADLINE_S} s ({seen} seen)")
            time.sleep(POLL_S)
    finally:
        proc.wait(timeout=60)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    return seen, time.monotonic() - started


def commit_groups(data: Path, model: Path) -> list[int]:
    """Units per commit group, in the order the engine runs them (same plan as the CLI run)."""
    from stereoset_eval.curation.loaders.crows import load_crows_pairs
    from stereoset_eval.scoring.backends import load_backend
    from stereoset_eval.scoring.methods import get_method
    from stereoset_eval.scoring.requests import plan_groups

    spec = get_method("crows-nangia")
    backend = load_backend(str(model), kind=spec.model_kind, device="cpu")
    options = spec.resolve(backend.tokenizer, spec.validate_options(None))
    units = spec.units(load_crows_pairs(data), options)
    prepared = [spec.prepare(u, backend.tokenizer, options) for u in units]
    return [len(g) for g in plan_groups([p.requests for p in prepared], BATCH_TOKENS)]


def test_sigkill_mid_run_then_rerun_gives_identical_results(tmp_path: Path, crows_csv: Path, models_dir: Path):
    model = models_dir / "tiny-bert"
    data = small_crows(crows_csv, tmp_path / "crows40.csv")

    reference = tmp_path / "reference"
    run_to_end(score_cmd(data, model, reference, tmp_path / "cache-reference"))

    cache, out = tmp_path / "cache", tmp_path / "resumed"
    cmd = score_cmd(data, model, out, cache)
    seen, killed_after_s = kill_after(cmd, cache, threshold=N_PAIRS // 3)
    committed = committed_units(cache)
    assert seen <= committed < N_PAIRS, "the kill came too late to test a resume"
    with sqlite3.connect(cache / "scores.sqlite3") as con:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert not (out / "scores.csv").exists() and not (out / "scores.json").exists(), "a killed run left outputs"

    # commits are whole groups, in order: the killed run lost only the group in flight
    groups = commit_groups(data, model)
    prefix = [sum(groups[:j]) for j in range(len(groups) + 1)]
    assert committed in prefix, f"{committed} committed units is not a whole number of groups {groups}"
    j = prefix.index(committed)
    lost_units = groups[j] if j < len(groups) else 0

    run_to_end(cmd)
    run = json.loads((out / "provenance.json").read_text())["runs"]["pairs"]["run"]
    assert run["cache_hits"] == 2 * committed, run          # two sentences per CrowS pair unit
    assert run["computed"] == 2 * (N_PAIRS - committed), run  # nothing committed was computed again

    for name in ("scores.csv", "scores.json"):
        assert (reference / name).read_bytes() == (out / name).read_bytes(), (
            f"{name} of the resumed run differs from the uninterrupted run")

    print(f"\n[crash-resume] {N_PAIRS} pairs ({2 * N_PAIRS} sentences), {len(groups)} commit groups "
          f"(batch_tokens {BATCH_TOKENS}); SIGKILL after {killed_after_s:.1f} s with {committed} pairs committed; "
          f"rerun: cache hits {run['cache_hits']} sentences, computed {run['computed']}; work lost at the kill "
          f"(recomputed): the in-flight group of {lost_units} pair(s) = {2 * lost_units} sentences; "
          "outputs identical to the uninterrupted run")
