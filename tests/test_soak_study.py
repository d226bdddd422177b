"""A soak test of studies under faults (issue 33): a study is killed at random points, rerun, and
must give the numbers of an unkilled run, with output sets that are complete or absent.

Every run is a child process (tests/soak_study.py) killed by SIGKILL, SIGTERM or SIGINT at a
random point of one place: in scoring (a forward call), in the cache write (inside the
transaction), in the report write (a file of the new set, or its swap into place) and, under
``make soak``, on a Ray worker (Ray retries the job). The kill points are drawn from the number
of times an unkilled calibration run reached each place. After each kill: the output folder is
absent (a fresh folder) or holds one complete set (a folder that held one before), no temporary
folder is left once a run completes, and the rerun (same cache, same output) completes with the
calibration run's tables (``study_scores.csv`` byte for byte, the report's sections equal) and
its sentence scores within the stated float32 tolerance (bit for bit unless a job was cut
mid-way and finished in other batches; the figures count both).

``make test`` runs the brief soak (one model, one benchmark, three kills: one per place and signal);
``make soak`` (``STEREOSET_EVAL_SOAK=full``) runs 20 kills of a study of 3 models x 4 benchmarks x
3 methods each, Ray-worker kills included, and prints the figures (docs/reliability.md keeps them).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from score_tolerance import score_files_agree  # tests/score_tolerance.py

FULL = os.environ.get("STEREOSET_EVAL_SOAK") == "full"
SHARED = Path(os.environ.get("STEREOSET_EVAL_SHARED") or Path(__file__).resolve().parents[2] / "shared")
MODELS = ("tiny-bert", "tiny-roberta", "tiny-gpt2") if FULL else ("tiny-gpt2",)
BENCHMARKS = [{"name": "StereoSet", "source": "stereoset"}, {"name": "CrowS-Pairs", "source": "crows-pairs"},
              {"name": "curated-StereoSet", "source": "curated", "from": "StereoSet"},
              {"name": "curated-CrowS", "source": "curated", "from": "CrowS-Pairs"}][: 4 if FULL else 1]
RUNS = int(os.environ.get("STEREOSET_EVAL_SOAK_RUNS", "20" if FULL else "3"))
PLACES = ("scoring", "cache", "report") + (("ray-worker",) if FULL else ())
SIGNALS = ("SIGKILL", "SIGTERM", "SIGINT")
MARKER = ".stereoset-eval-output.json"
CHILD = Path(__file__).with_name("soak_study.py")
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
       "RAY_USAGE_STATS_ENABLED": "0"}
CHILD_TIMEOUT_S = 600


def raw_config(out: Path, cache: Path) -> dict:
    return {"study": {"title": "soak", "output": str(out), "cache_dir": str(cache), "limit": 4},
            "data": {"dir": str(SHARED / "data"), "download": False},
            "models": [{"id": str(SHARED / "fixtures" / "models" / m)} for m in MODELS],
            "benchmarks": BENCHMARKS,
            "methods": {"masked": ["pll"], "causal": ["causal-ll"], "benchmark_methods": True},
            "analysis": {"bootstrap": 20}}


class Runs:
    """Study runs in child processes: a fresh interpreter for a Ray run, else a fork of one server that
    imported everything once (tests/soak_study.py --serve: the imports are not paid per run)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.log = open(tmp / "children.log", "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.server = subprocess.Popen([sys.executable, str(CHILD), "--serve"], env=ENV, cwd=str(tmp), text=True,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def close(self) -> None:
        assert self.server.stdin is not None
        self.server.stdin.close()
        self.server.wait(timeout=60)
        self.log.close()

    def run(self, name: str, *, kill: dict | None = None, executor: str = "local", out: Path, cache: Path
            ) -> tuple[int, dict | None]:
        """Run the study once; its exit status and the places it reached (when it got to say)."""
        spec, counts = self.tmp / f"{name}.spec.json", self.tmp / f"{name}.counts.json"
        spec.write_text(json.dumps({"config": raw_config(out, cache), "kill": kill, "executor": executor,
                                    "counts": str(counts)}), encoding="utf-8")
        if executor == "ray":
            done = subprocess.run([sys.executable, str(CHILD), str(spec)], env=ENV, capture_output=True, text=True,
                                  timeout=CHILD_TIMEOUT_S, cwd=str(self.tmp))
            rc, err = done.returncode, done.stderr[-3000:]
        else:
            assert self.server.stdin is not None and self.server.stdout is not None
            self.server.stdin.write(f"{spec}\n")
            self.server.stdin.flush()
            rc, err = int(self.server.stdout.readline()), "see children.log"
        if kill is None:
            assert rc == 0, err
        return rc, json.loads(counts.read_text()) if counts.exists() else None


def complete_or_absent(out: Path, files: set[str]) -> str:
    """``absent`` or ``complete`` (one set: the marker lists exactly the files there); fails otherwise."""
    if not out.exists():
        return "absent"
    present = {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()}
    assert present == files, f"not one complete set: missing {sorted(files - present)}, extra {sorted(present - files)}"
    marker = json.loads((out / MARKER).read_text())
    assert {f for f in marker["files"]} <= present
    return "complete"


def _tables(out: Path) -> dict:
    report = json.loads((out / "report.json").read_text())
    return {"study_scores": (out / "study_scores.csv").read_bytes(),
            "sections": [s.get("data") for s in report["sections"] if s.get("key") != "overview"]}


def same_numbers(out: Path, ref_out: Path) -> bool:
    """The reference run's tables exactly and its sentence scores within the stated tolerance; True
    when the scores are also bit for bit (a job interrupted mid-way is finished in other batches,
    which moves float32 sums within the tolerance: docs/scoring-settings.md)."""
    assert _tables(out) == _tables(ref_out), f"{out.name}: other tables than the unkilled run's"
    score_files_agree(out / "scores.csv", ref_out / "scores.csv", exact=False)
    return (out / "scores.csv").read_bytes() == (ref_out / "scores.csv").read_bytes()


@pytest.mark.slow
def test_studies_killed_anywhere_rerun_to_the_same_numbers(tmp_path: Path) -> None:
    started = time.monotonic()
    rng = random.Random(int(os.environ.get("STEREOSET_EVAL_SOAK_SEED", "33")))
    ref_out, ref_cache = tmp_path / "reference", tmp_path / "reference-cache"
    runs = Runs(tmp_path)
    _, counts = runs.run("reference", out=ref_out, cache=ref_cache)
    assert counts and all(counts[p] > 0 for p in ("scoring", "cache", "report")), counts
    files = {str(p.relative_to(ref_out)) for p in ref_out.rglob("*") if p.is_file()}
    calibrated = time.monotonic() - started
    tally: Counter = Counter()
    for run in range(RUNS):
        place = PLACES[run % len(PLACES)]
        sig = SIGNALS[(run + run // len(PLACES)) % len(SIGNALS)]  # every place meets every signal
        at = rng.randint(1, counts[place]) if place != "ray-worker" else rng.randint(0, 3000)
        out, cache = tmp_path / f"out{run}", tmp_path / f"cache{run}"
        if run % 2:  # half the runs replace an earlier complete set: it must survive the kill whole
            shutil.copytree(ref_out, out)
        kill = {"place": place, "signal": sig, "at": at}
        executor = "ray" if place == "ray-worker" else "local"
        rc, reached = runs.run(f"killed{run}", kill=kill, executor=executor, out=out, cache=cache)
        state = complete_or_absent(out, files)
        assert run % 2 == 0 or state == "complete", "an earlier complete set was lost"
        if state == "complete" and rc == 0:
            same_numbers(out, ref_out)  # the kill came after the last place was passed: the run finished
        runs.run(f"rerun{run}", out=out, cache=cache, executor=executor)
        assert complete_or_absent(out, files) == "complete"
        tally["reruns bit for bit" if same_numbers(out, ref_out) else "reruns within the tolerance"] += 1
        left = [p.name for p in tmp_path.iterdir() if p.name.startswith(f".{out.name}.")]
        assert not left, f"temporary folders left beside the output: {left}"
        killed = rc != 0 or bool(reached and reached.get("ray_workers_killed"))
        tally[f"{place:10s} {sig:8s} {'killed' if killed else 'finished first'}"] += 1
    runs.close()
    wall = time.monotonic() - started
    lines = [f"soak: {RUNS} runs ({len(MODELS)} models x {len(BENCHMARKS)} benchmarks), calibration "
             f"{calibrated:.1f} s, total {wall:.1f} s; every rerun completed with the unkilled run's tables, "
             "no set lost or mixed"]
    lines += [f"  {what}: {n}" for what, n in sorted(tally.items())]
    print("\n".join(lines))
    figures = os.environ.get("STEREOSET_EVAL_SOAK_FIGURES")
    if figures:
        Path(figures).write_text("\n".join(lines) + "\n", encoding="utf-8")
