"""SIGKILL at random moments of ``report`` and ``study``: the output folder holds the old complete set
or the new complete set, never a mix (``scores.csv`` of one run beside ``report.*`` of another).

Each command first writes a complete set. Then, several times (report: 6, study: 4), a run that
would write a different set (another title, another ``limit``) is started in a child process and
killed with SIGKILL after a random delay — drawn over the whole run, and half of the time over
its last part, where the files are written (both phases are drawn equally often; the study's
kills alternate between its two sizes). After each kill the folder must hold exactly the files of
one run, all from the same run: the title in ``report.json`` equals the one in ``report.md`` and
``report.html``, the marker lists exactly the files present, and (study) ``scores.csv`` has the
rows of the ``limit`` that report.json records. A last, unkilled run removes what killed runs
left beside the folder.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("STEREOSET_EVAL_SHARED") or Path(__file__).resolve().parents[2] / "shared")
MODELS = SHARED / "fixtures" / "models"
DATA = SHARED / "data"
MARKER = ".stereoset-eval-output.json"
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "stereoset_eval.cli.main", *args]


def _timed_run(argv: list[str]) -> float:
    start = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return time.monotonic() - start


def _kill_after(argv: list[str], delay: float) -> None:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _delays(rng: random.Random, duration: float, n: int) -> list[float]:
    return [rng.uniform(0.0, duration) if i % 2 == 0 else rng.uniform(0.6 * duration, 1.05 * duration)
            for i in range(n)]


def _one_complete_set(out: Path, expected: set[str]) -> str:
    """The title of the single run whose files ``out`` holds (fails on a mix or a partial set)."""
    present = {p.name for p in out.iterdir()}
    assert present == expected | {MARKER}, f"not one complete set: {sorted(present)}"
    marker = json.loads((out / MARKER).read_text())
    assert set(marker["files"]) == expected, marker
    doc = json.loads((out / "report.json").read_text())
    title = doc["title"]
    assert title in (out / "report.md").read_text() and title in (out / "report.html").read_text(), title
    return title.split(" — ", 1)[1] if title.startswith("LIMITED RUN") else title  # the run's own title


def _no_leftovers(out: Path) -> None:
    left = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    assert not left, f"temporary folders left beside the output: {left}"


def test_report_killed_at_random_points(tmp_path: Path) -> None:
    header = ",sent_more,sent_less,stereo_antistereo,bias_type\n"
    rows = "".join(f'{i},"Women are bad at task {i}.","Men are bad at task {i}.",stereo,gender\n' for i in range(60))
    gold = tmp_path / "gold.csv"
    gold.write_text(header + rows)
    scores = tmp_path / "s.csv"
    scores.write_text("sentence_id,score\n" + "".join(f"crows:{i}:more,{-1 - (i % 7) / 10}\ncrows:{i}:less,{-1.3}\n"
                                                      for i in range(60)))
    out = tmp_path / "out"

    def argv(title: str) -> list[str]:
        return _cli("report", "--benchmark", "crows-pairs", "--data", str(gold), "--scores", str(scores), "--out",
                    str(out), "--bootstrap", "400", "--title", title)

    expected = {"report.json", "report.md", "report.html", "results.json"}
    duration = _timed_run(argv("run 0"))
    complete = {"run 0"}
    rng = random.Random(16)
    for k, delay in enumerate(_delays(rng, duration, 6), start=1):
        _kill_after(argv(f"run {k}"), delay)
        title = _one_complete_set(out, expected)
        assert title in complete | {f"run {k}"}, f"{title!r} is neither the old nor the new set"
        complete.add(title)
    _timed_run(argv("final"))
    assert _one_complete_set(out, expected) == "final"
    _no_leftovers(out)


@pytest.mark.skipif(not MODELS.is_dir() or not (DATA / "crows-pairs").is_dir(), reason="fixture models / data missing")
def test_study_killed_at_random_points(tmp_path: Path) -> None:
    out = tmp_path / "out"

    def config(title: str, limit: int) -> Path:
        path = tmp_path / f"{title.replace(' ', '_')}.toml"
        path.write_text(f'[study]\ntitle = "{title}"\noutput = "{out}"\ncache_dir = "{tmp_path / "cache"}"\n'
                        f'limit = {limit}\n[data]\ndir = "{DATA}"\ndownload = false\n'
                        f'[[models]]\nid = "{MODELS / "tiny-bert"}"\n[[models]]\nid = "{MODELS / "tiny-gpt2"}"\n'
                        '[[benchmarks]]\nname = "CrowS-Pairs"\nsource = "crows-pairs"\n'
                        '[methods]\nmasked = ["pll"]\ncausal = ["causal-ll"]\n[analysis]\nbootstrap = 50\n')
        return path

    def check(expected_titles: set[str]) -> str:
        title = _one_complete_set(out, {"report.json", "report.md", "report.html", "results.json", "scores.csv",
                                               "study_scores.csv"})
        assert title in expected_titles, f"{title!r} is neither the old nor the new set"
        limit = json.loads((out / "report.json").read_text())["provenance"]["options"]["limit"]
        n_rows = len((out / "scores.csv").read_text().splitlines()) - 1
        # limit items x 2 sentences x (2 models x 2 methods: the benchmark's own and pll/causal-ll)
        assert n_rows % (2 * limit) == 0 and n_rows // (2 * limit) >= 2, (title, limit, n_rows)
        assert f'"{title}"' in (out / "report.json").read_text()
        return title

    # warm the cache for both sizes: the killed runs then mostly write (a limit keeps the first items, so the
    # 10-item run scores every sentence of the 8-item runs too; run 0 below then reads them all from the cache)
    _timed_run(_cli("study", str(config("warm 10", 10)), "--quiet", "--overwrite"))
    duration = _timed_run(_cli("study", str(config("run 0", 8)), "--quiet", "--overwrite"))
    complete = {check({"run 0"})}
    rng = random.Random(7)
    for k, delay in enumerate(_delays(rng, duration, 4), start=1):  # 2 over the whole run, 2 over its last part
        title = f"run {k}"
        _kill_after(_cli("study", str(config(title, 10 if k % 2 else 8)), "--quiet", "--overwrite"), delay)
        complete.add(check(complete | {title}))
    _timed_run(_cli("study", str(config("final", 8)), "--quiet", "--overwrite"))
    assert check({"final"}) == "final"
    _no_leftovers(out)
