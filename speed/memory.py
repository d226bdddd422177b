"""Does scoring memory follow the batch budget, not the dataset? BERT-base-sized, default policy.

Two child processes score the first 640 and 1,280 StereoSet intrasentence examples (1,920 and
3,840 sentences) with ``stereoset-mlm`` through ``score_items`` (cache off, the default allocator
policy, as a user gets it). Each loads the model, resets the kernel's RSS high-water mark
(``/proc/self/clear_refs``), scores and reads the new mark (``VmHWM``): the *scoring peak above
base* is that mark minus the resident size before scoring. Growth = large − small; a policy that
let the heap fragment grew by hundreds of MB here (``stereoset_eval.scoring.memory``).

One child's peak moves from run to run (the 1,920-sentence peak ranged 148–209 MB over the issue-35
runs, the growth −15 to +50 MB), so each size runs in ``repeats`` children (small and large
alternating) and the growth is taken between the children with the median peak of each size;
every child's peak is kept in the results.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

N_SMALL, N_LARGE = 640, 1280  # StereoSet intrasentence examples: 1,920 and 3,840 sentences
REPEATS = 3  # children per size: the growth is taken between the median peaks
STEREOSET_FILE = Path("stereoset") / "stereoset_dev_ids_ptbr_llm.csv"

_CHILD = r"""
import json, resource, sys, time
spec = json.loads(sys.argv[1])
import torch
if spec["threads"]:
    torch.set_num_threads(spec["threads"])
from stereoset_eval.curation.loaders.registry import load_items
from stereoset_eval.scoring.api import score_items
from stereoset_eval.scoring.backends import load_backend

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
items = [i for i in load_items("stereoset", spec["data"]) if i.task == "intrasentence"][: spec["n_items"]]
backend = load_backend(spec["model"], kind="masked", device="cpu")
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
before = status("VmRSS")
t = time.perf_counter()
ss = score_items(items, model=spec["model"], method="stereoset-mlm", device="cpu",
                 batch_tokens=spec["batch_tokens"], use_cache=False)
print(json.dumps({"scoring_peak_mb": round(status("VmHWM") - before, 1), "rss_before_scoring_mb": round(before, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "n_sentences": len(ss), "seconds": round(time.perf_counter() - t, 2),
                  "allocator": ss.provenance["run"]["allocator"]}))
"""


def _child(model: Path, data_dir: Path, n_items: int, batch_tokens: int, threads: int | None) -> dict[str, Any]:
    spec = {"model": str(model), "data": str(data_dir / STEREOSET_FILE), "n_items": n_items,
            "batch_tokens": batch_tokens, "threads": threads}
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}  # TOKENIZERS_PARALLELISM: as run.py set it
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(spec)], cwd=Path(__file__).resolve().parent.parent,
                          env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"memory measurement failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure_growth(model: Path, data_dir: Path, *, batch_tokens: int, threads: int | None = None,
                   repeats: int = REPEATS) -> dict[str, Any]:
    """Scoring peak at 1,920 and 3,840 sentences (the child with the median peak of ``repeats`` per
    size), its growth, every child's peak, and the process peak RSS over all of them."""
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    runs: dict[str, list[dict[str, Any]]] = {"small": [], "large": []}
    for _ in range(repeats):
        runs["small"].append(_child(model, data_dir, N_SMALL, batch_tokens, threads))
        runs["large"].append(_child(model, data_dir, N_LARGE, batch_tokens, threads))
    return summarize(runs, batch_tokens)


def summarize(runs: dict[str, list[dict[str, Any]]], batch_tokens: int) -> dict[str, Any]:
    """The growth between each size's median child (:func:`median_run`), with every child's peak.

    >>> child = lambda peak, n: {"scoring_peak_mb": peak, "peak_rss_mb": 1000 + peak, "n_sentences": n,
    ...                          "seconds": 1.0, "allocator": "fast"}
    >>> q = summarize({"small": [child(150.5, 1), child(190.0, 1), child(180.2, 1)],
    ...                "large": [child(200.4, 2), child(195.0, 2), child(260.0, 2)]}, 4096)
    >>> q["growth_mb"], q["scoring_peaks_mb"]["small"], q["peak_rss_mb"]
    (20.2, [150.5, 190.0, 180.2], 1260.0)
    """
    small, large = median_run(runs["small"]), median_run(runs["large"])
    return {"small": small, "large": large, "policy": large["allocator"], "batch_tokens": batch_tokens,
            "repeats": len(runs["small"]),
            "scoring_peaks_mb": {k: [r["scoring_peak_mb"] for r in v] for k, v in runs.items()},
            "growth_mb": round(large["scoring_peak_mb"] - small["scoring_peak_mb"], 1),
            "peak_rss_mb": max(r["peak_rss_mb"] for v in runs.values() for r in v)}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The child whose scoring peak is the median of the children's (the lower middle one for an
    even number): a run that happened, not an average of runs."""
    peak = statistics.median_low(r["scoring_peak_mb"] for r in runs)
    return next(r for r in runs if r["scoring_peak_mb"] == peak)
