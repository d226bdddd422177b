"""``python -m speed.run``: time our scorers against the reference loop, minicons and the floor.

For every model and method: ``ours`` (the public API, cache off), ``reference-loop`` (the
references' unbatched control flow), ``minicons`` (PLL methods only; optional dependency) and
``floor`` (only the unavoidable forward passes) score the same sentences with the same model.
Each runs in its own process (peak RSS per implementation) and warms up; then ``--repeats``
rounds time every implementation once each (ours and the floor back to back: :func:`round_order`),
so load changes on a shared machine hit all alike (medians of wall and process-CPU time). Every
implementation's numbers are compared with ours; the Markdown tables are printed and everything is
written to a JSON file.

Examples::

    python -m speed.run                                  # everything (~15-25 min on 2 cores)
    python -m speed.run --models bert-base-random --methods crows-nangia pll
    python -m speed.run --smoke --isolation inline       # seconds: tiny models, few sentences
    python -m speed.run --device cuda --models bert-base-random gpt2-small-random --crows-pairs 50
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata as md
import os
import platform
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from speed import report
from speed.cell import CellSpec, InlineWorker, ProcessWorker
from speed.impls import IMPLEMENTATION_NAMES, STUDY_FLOOR_IMPLEMENTATION, STUDY_IMPLEMENTATION, get_implementation
from speed.machine_lock import MachineLockError, default_lock_path, machine_lock
from speed.measure import loadavg
from speed.memory import REPEATS as MEMORY_REPEATS, measure_growth
from speed.models import default_model_cache, model_path
from speed.specs import (
    ALL_METHODS, BASELINE_SLICES, DEFAULT_SLICES, METHOD_DATASET, MODELS, SLOW_BASELINES, SMOKE_SLICES, STUDY_METHODS,
)
from stereoset_eval.foundation.atomic import atomic_write_json, atomic_write_text
from stereoset_eval.foundation.oserrors import problem_of
from stereoset_eval.foundation.provenance import git_commit

REPO = Path(__file__).resolve().parent.parent
SCHEMA = "stereoset-eval-benchmark/1"
RANDOM_INIT_NOTE = ("Models marked random-init have random weights: legitimate here ONLY because this is a timing "
                    "benchmark (same architecture and compute as the real model); their scores are not bias "
                    "measurements and serve only to check that all implementations compute the same numbers.")


def shared_dir() -> Path:
    env = os.environ.get("STEREOSET_EVAL_SHARED")
    return Path(env) if env else REPO.parent / "shared"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from stereoset_eval.scoring.settings import DEFAULT_BATCH_TOKENS

    p = argparse.ArgumentParser(prog="python -m speed.run", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS), metavar="MODEL",
                   help=f"models to run (default: all: {', '.join(MODELS)})")
    p.add_argument("--methods", nargs="+", default=list(ALL_METHODS), choices=list(ALL_METHODS), metavar="METHOD",
                   help="methods to run (default: all the model's methods)")
    p.add_argument("--impls", nargs="+", default=list(IMPLEMENTATION_NAMES), choices=list(IMPLEMENTATION_NAMES),
                   metavar="IMPL", help="implementations (default: all; 'ours' is always run: ratios need it)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed runs per measurement; the median is reported (3; --smoke: 1)")
    p.add_argument("--fixture-repeats", type=int, default=None,
                   help="timed rounds of the fixture models' cells (default: --repeats). Their rounds take seconds "
                        "against the base-sized models' minutes, so more of them cost little and steady their medians")
    p.add_argument("--fixture-baseline-repeats", type=int, default=None,
                   help="timed rounds of the slow baselines (the reference loop, minicons) in the fixture models' "
                        "cells: the first N of their rounds (default: every round). No target of these cells divides "
                        "by them, and they take more than half of most fixture rounds: rounds of ours and the floor "
                        "cost less without them")
    p.add_argument("--round-order", choices=("paired", "fixed"), default="paired",
                   help="paired (default): each round runs ours and the floor (the study row: pll alone, the "
                        "study and the study floor) back to back, alternating which goes first, then the slow baselines; fixed: the "
                        "--impls order every round (runs before the fourteenth issue-35 session)")
    p.add_argument("--warmup-items", type=int, default=None,
                   help="items in the warm-up run (default: 10 for fixture models, 1 for base-sized; "
                        "--smoke: none)")
    p.add_argument("--crows-pairs", type=int, default=None, help="CrowS-Pairs slice for base-sized models (4)")
    p.add_argument("--stereoset-examples", type=int, default=None,
                   help="StereoSet intrasentence slice for base-sized models (50 examples = 150 sentences)")
    p.add_argument("--fixture-crows-pairs", type=int, default=None, help="CrowS-Pairs slice for fixture models (default: all 1,508 pairs)")
    p.add_argument("--fixture-stereoset-examples", type=int, default=None,
                   help="StereoSet slice for fixture models (default: all 2,106 intrasentence dev examples)")
    p.add_argument("--baseline-crows-pairs", type=int, default=None,
                   help="CrowS-Pairs slice the reference loop and minicons score (default: 100 on fixture models, "
                        "4 on base-sized; given, it applies to every model, never beyond the model's own slice; "
                        "they are compared per sentence)")
    p.add_argument("--baseline-stereoset-examples", type=int, default=None,
                   help="StereoSet slice the reference loop scores (default: 100 on fixture models, 50 on "
                        "base-sized; given, it applies to every model, never beyond the model's own slice)")
    p.add_argument("--no-study", action="store_true",
                   help="skip the study row (pll + pll-word-l2r + crows-nangia in one run vs pll alone)")
    p.add_argument("--study-only", action="store_true",
                   help="run only the study rows (and the memory step unless --no-memory)")
    p.add_argument("--no-memory", action="store_true",
                   help="skip the BERT-base-sized memory measurement (stereoset-mlm at 1,920 and 3,840 sentences)")
    p.add_argument("--memory-repeats", type=int, default=MEMORY_REPEATS,
                   help="child processes per size in the memory measurement; the growth is taken between "
                        f"each size's median peak (default {MEMORY_REPEATS})")
    p.add_argument("--smoke", action="store_true", help="tiny slices, 1 repeat, no warm-up: checks the machinery only")
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's default)")
    p.add_argument("--omp-wait-policy", choices=("inherit", "passive", "active"), default="inherit",
                   help="OMP_WAIT_POLICY for the measurements, set before torch loads. Default: inherit the "
                        "environment (what users get). 'passive' makes idle OpenMP threads sleep instead of spin: "
                        "on a machine shared with other busy processes that avoids several-fold slow-downs, but on "
                        "a quiet one it slows fine-grained work (the reference loop 2x, tiny models 1.5x)")
    p.add_argument("--malloc", choices=("inherit", "tuned"), default="inherit",
                   help="glibc malloc settings of the worker processes. Default: inherit (what users get). 'tuned' "
                        "sets MALLOC_MMAP_THRESHOLD_=1GiB / MALLOC_TRIM_THRESHOLD_=2GiB so freed activation buffers are "
                        "reused instead of re-mapped: with glibc's defaults every tensor over 32 MB (and many smaller "
                        "ones) is a fresh mmap, and page faults cost BERT-base-sized models 20-35 %% of their time "
                        "(same for every implementation; jemalloc/tcmalloc via LD_PRELOAD do the same job). Ours applies "
                        "its own policy on top (stereoset_eval.scoring.memory; STEREOSET_EVAL_MALLOC_TUNING=fast|bounded|off, default "
                        "fast), recorded in the output")
    p.add_argument("--onednn-cache", choices=("off", "inherit"), default="off",
                   help="off (default): ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 for every implementation's process, as ours "
                        "sets it for itself (stereoset_eval.scoring.memory: the cache's small allocations fragment a "
                        "heap that reuses freed buffers; numbers unchanged), so no implementation gains or loses by "
                        "it; inherit: the environment's (oneDNN's default keeps 1,024 primitives; ours still turns "
                        "it off unless the variable is set)")
    p.add_argument("--tokenizers-parallelism", choices=("inherit", "false", "true"), default="inherit",
                   help="TOKENIZERS_PARALLELISM for every worker process. Default: inherit the environment (what "
                        "users get; unset means the Rust tokenizer encodes batches on every core). false: one thread, "
                        "as runs after a fork get it. Only implementations that tokenize inside the timed run feel "
                        "it (ours: its batched encodings; the floor tokenizes before timing)")
    p.add_argument("--device", default="cpu",
                   help="torch device for every implementation: cpu (default) or cuda[:N]. On a GPU use bigger "
                        "slices (--crows-pairs 100): a few sentences are over in milliseconds")
    p.add_argument("--reference-autograd", choices=("as-reference", "off"), default="as-reference",
                   help="as-reference (default): the reference loop keeps autograd on where its reference does "
                        "(crows-nangia: metric.py never calls no_grad), inference mode elsewhere; off: inference "
                        "mode everywhere, a stricter baseline than the references themselves")
    p.add_argument("--batch-tokens", type=int, default=DEFAULT_BATCH_TOKENS,
                   help=f"token budget per batch for ours and the floor ({DEFAULT_BATCH_TOKENS})")
    p.add_argument("--minicons-batch-size", type=int, default=32, help="sentences per minicons call (32, as G5)")
    p.add_argument("--isolation", choices=("process", "inline"), default="process",
                   help="process (default): each implementation in its own child process (its own peak RSS); "
                        "inline: all in this process (fast start; peak RSS is the process-wide maximum)")
    p.add_argument("--out", default=None,  # kept as text until parsed: a trailing / says "folder"
                   help="JSON output, the Markdown tables beside it as .md (default runs/bench/bench-<UTC time>.json); "
                        "a folder (one that exists, or a path ending in /): bench-<UTC time>.json in it")
    p.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default ../shared/data)")
    p.add_argument("--fixtures-dir", type=Path, default=None, help="fixture models (default ../shared/fixtures/models)")
    p.add_argument("--model-cache", type=Path, default=None,
                   help=f"where random-init models are built once (default {default_model_cache()})")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per isolated measurement (1800)")
    p.add_argument("--lock", type=Path, default=default_lock_path(),
                   help="file whose lock marks a timing run on this machine: a second run started while one "
                        "measures is refused (default %(default)s; --smoke runs take none)")
    args = p.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.smoke else 3
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    if args.fixture_repeats is None:
        args.fixture_repeats = args.repeats
    if args.fixture_repeats < 1:
        p.error("--fixture-repeats must be >= 1")
    if args.fixture_baseline_repeats is None:
        args.fixture_baseline_repeats = args.fixture_repeats
    if not 1 <= args.fixture_baseline_repeats <= args.fixture_repeats:
        p.error("--fixture-baseline-repeats must be between 1 and --fixture-repeats")
    if args.memory_repeats < 1:
        p.error("--memory-repeats must be >= 1")
    if "ours" not in args.impls:
        args.impls = ["ours"] + args.impls
    args.out_folder = args.out is not None and (args.out.endswith(("/", os.sep)) or Path(args.out).is_dir())
    args.out = Path(args.out) if args.out is not None else None
    problem = out_problem(args.out, args.out_folder)
    if problem:  # one line: the usage text would bury it
        p.exit(2, f"{p.prog}: error: {problem}\n")
    return args


def out_problem(out: Path | None, folder: bool) -> str | None:
    """Why the results could not be written to ``out`` (checked before the hour of measuring), or None.

    >>> out_problem(None, False) is None  # the default folder, runs/bench/
    True
    """
    if out is None or folder:
        return None
    tables = out.with_suffix(".md")  # out itself, were it a folder, would be written into
    if tables.is_dir():
        return f"--out {out}: {tables} is a folder (give a file name, or the folder itself to write bench-<UTC time>.json in it)"
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"--out {out}: {parent} is a file, not a folder"
    if not os.access(parent, os.W_OK):
        return f"--out {out}: cannot write in {parent}"
    return None


def output_path(out: Path | None, folder: bool, created_at: str) -> Path:
    """The JSON file to write: ``out``, or ``bench-<UTC time>.json`` in ``out`` when it is a folder (or not given)."""
    name = f"bench-{created_at.replace(':', '').replace('+0000', 'Z')}.json"
    if out is None:
        return REPO / "runs" / "bench" / name
    return out / name if folder else out


def baseline_sizes(args: argparse.Namespace) -> dict[str, dict[str, int | None]]:
    """The slices the slow baselines score (never more than the implementations they are compared with)."""
    sizes = {size: dict(v) for size, v in (SMOKE_SLICES if args.smoke else BASELINE_SLICES).items()}
    for dataset, value in (("crows-pairs", args.baseline_crows_pairs),
                           ("stereoset-intra", args.baseline_stereoset_examples)):
        if value is not None:
            for by_dataset in sizes.values():
                by_dataset[dataset] = value
    full = slice_sizes(args)
    for size, by_dataset in sizes.items():
        for dataset, n in by_dataset.items():
            cap = full[size][dataset]
            by_dataset[dataset] = cap if n is None or (cap is not None and cap < n) else n
    return sizes


def _label(dataset: str, n: int | None, baseline: int | None, impls: list[str]) -> str:
    shown = f"{dataset} (all)" if n is None else f"{dataset}[:{n}]"
    slow = [i for i in impls if i in SLOW_BASELINES]
    if slow and baseline != n:
        shown += f"; {', '.join(slow)} [:{baseline}]"
    return shown


def slice_sizes(args: argparse.Namespace) -> dict[str, dict[str, int | None]]:
    sizes = {size: dict(v) for size, v in (SMOKE_SLICES if args.smoke else DEFAULT_SLICES).items()}
    for size, dataset, value in (("base", "crows-pairs", args.crows_pairs),
                                 ("base", "stereoset-intra", args.stereoset_examples),
                                 ("fixture", "crows-pairs", args.fixture_crows_pairs),
                                 ("fixture", "stereoset-intra", args.fixture_stereoset_examples)):
        if value is not None:
            sizes[size][dataset] = value
    return sizes


def plan_cells(args: argparse.Namespace, data_dir: Path, fixtures_dir: Path) -> list[Measurement]:
    """One :class:`Measurement` per (model, method), in run order."""
    sizes, baselines = slice_sizes(args), baseline_sizes(args)
    plan = []
    for name in args.models:
        spec = MODELS[name]
        methods = [m for m in args.methods if m in spec.methods]
        if not methods:
            continue
        path = model_path(spec, fixtures_dir=fixtures_dir, cache_dir=args.model_cache)
        info = {"name": spec.name, "origin": spec.origin, "note": spec.note, "kind": spec.kind, "size": spec.size,
                "path": str(path)}
        for method in ([] if args.study_only else methods):
            dataset = METHOD_DATASET[method]
            n, n_base = sizes[spec.size][dataset], baselines[spec.size][dataset]
            warm = args.warmup_items
            if warm is None:
                warm = 0 if args.smoke else (10 if spec.size == "fixture" else 1)
            impls = [impl for impl in args.impls if method in get_implementation(impl).methods]
            cells = [CellSpec(impl=impl, model=name, model_path=str(path), kind=spec.kind, method=method,
                              dataset=dataset, data_dir=str(data_dir), n_items=n_base if impl in SLOW_BASELINES else n,
                              warmup_items=warm, threads=args.threads, batch_tokens=args.batch_tokens,
                              minicons_batch_size=args.minicons_batch_size, device=args.device,
                              reference_autograd=args.reference_autograd)
                     for impl in impls]
            plan.append(Measurement(info, method, _label(dataset, n, n_base, impls), cells))
        if (not args.no_study and spec.size == "fixture" and spec.kind == "masked"
                and set(STUDY_METHODS) <= set(methods)):
            n = sizes[spec.size]["crows-pairs"]
            warm = 0 if args.smoke else (args.warmup_items if args.warmup_items is not None else 10)
            cells = [CellSpec(impl=impl, model=name, model_path=str(path), kind=spec.kind, method=method,
                              dataset="crows-pairs", data_dir=str(data_dir), n_items=n, warmup_items=warm,
                              threads=args.threads, batch_tokens=args.batch_tokens,
                              minicons_batch_size=args.minicons_batch_size, device=args.device,
                              reference_autograd=args.reference_autograd)
                     for impl, method in (("ours", "pll"), (STUDY_IMPLEMENTATION, "study"),
                                          (STUDY_FLOOR_IMPLEMENTATION, "study"))]
            plan.append(Measurement(info, "study", _label("crows-pairs", n, n, []), cells))
    return plan


@dataclass(frozen=True)
class Measurement:
    """The implementations of one (model, method) on one data slice."""

    model: dict[str, Any]
    method: str
    label: str
    cells: list[CellSpec]


PAIRED = ("ours", "floor", STUDY_IMPLEMENTATION, STUDY_FLOOR_IMPLEMENTATION)  # ours and what its fixture targets divide it by


def round_order(impls: Sequence[str], r: int, mode: str = "paired") -> list[int]:
    """The places in ``impls`` in the order round ``r`` (from 0) runs them.

    ``paired``: ours and the implementation its close targets compare it with (the floor; in the
    study row, ``pll`` alone, the study and the study's floor) run back to back, in the order
    given in even rounds and reversed in odd ones, then the slow baselines. The machine's speed moves between states within
    seconds (tiny-bert ``crows-nangia``, thirteenth issue-35 session: ours 2.06-2.14 s in three rounds,
    2.45-2.58 s in four), and a ratio of medians compares whichever state each side's median fell
    in; times taken seconds apart share a state more often than times ~10 s apart, with the
    reference loop and minicons between them. ``fixed``: ``impls`` as given, every round (the order
    of every run before the fourteenth session).

    >>> round_order(["ours", "reference-loop", "minicons", "floor"], 0)
    [0, 3, 1, 2]
    >>> round_order(["ours", "reference-loop", "minicons", "floor"], 1)
    [3, 0, 1, 2]
    >>> round_order(["ours", "reference-loop", "minicons", "floor"], 1, "fixed")
    [0, 1, 2, 3]
    """
    if mode == "fixed":
        return list(range(len(impls)))
    if mode != "paired":
        raise ValueError(f"unknown round order {mode!r} (paired, fixed)")
    pair = [k for k, impl in enumerate(impls) if impl in PAIRED]
    rest = [k for k in range(len(impls)) if k not in pair]
    return (pair if r % 2 == 0 else pair[::-1]) + rest


def measure(m: Measurement, args: argparse.Namespace, counter: str) -> dict[str, Any]:
    """Time every implementation of ``m`` in rounds (each once per round) and combine the results.

    Workers are started together (model loading is untimed), then each round runs every ready
    implementation once, so a change in machine load during the measurement hits all alike; in a
    fixture model's cell, the slow baselines only in the first ``--fixture-baseline-repeats`` rounds.
    """
    print(f"[{counter}] {m.model['name']} {m.method} {m.label}: starting {', '.join(c.impl for c in m.cells)}",
          file=sys.stderr, flush=True)
    workers = [ProcessWorker(c, timeout_s=args.timeout) if args.isolation == "process" else InlineWorker(c)
               for c in m.cells]
    for w in workers:
        w.wait_ready()
    fixture = m.model["size"] == "fixture"
    repeats = args.fixture_repeats if fixture else args.repeats
    baseline_repeats = args.fixture_baseline_repeats if fixture else repeats
    for r in range(repeats):
        times = []
        for k in round_order([c.impl for c in m.cells], r, args.round_order):
            w = workers[k]
            if w.state.get("status") != "ready" or (r >= baseline_repeats and w.spec.impl not in PAIRED):
                continue
            reply = w.run_once()
            times.append(f"{w.spec.impl} {reply['wall_s']:.3f} s" if reply.get("status") == "ok"
                         else f"{w.spec.impl} {reply.get('status')}")
        print(f"[{counter}] round {r + 1}/{repeats}: " + "; ".join(times), file=sys.stderr, flush=True)
    by_impl = {w.spec.impl: w.finish() for w in workers}
    for impl, res in by_impl.items():
        if res.get("status") != "ok":
            print(f"[{counter}] {impl}: {res.get('status')}: {res.get('reason', '')}", file=sys.stderr, flush=True)
    return report.combine(m.model, m.method, m.label, by_impl, by_impl.get("ours", {}).get("scored_tokens"))


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for pkg in ("torch", "transformers", "tokenizers", "numpy", "minicons", "stereoset-eval"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


def reference_note(mode: str) -> str:
    """What the reference loop's autograd setting means for the ratios against it."""
    if mode == "off":
        return ("reference-loop runs every method under inference_mode (--reference-autograd off), with the fast "
                "tokenizer: stricter than the references themselves (metric.py keeps autograd on), so speed-ups "
                "against it understate ours.")
    return ("reference-loop keeps autograd on for crows-nangia, as metric.py does (it never calls no_grad), and "
            "runs the other methods under inference_mode; it uses the fast tokenizer where the references use "
            "the slow one. --reference-autograd off gives the stricter inference-mode baseline.")


def ours_allocator() -> str:
    """The allocator policy ours (and only ours) applies in its worker (stereoset_eval.scoring.memory)."""
    from stereoset_eval.scoring.memory import planned_policy

    return planned_policy()


def _gpu_name(device: str) -> str | None:
    if not device.startswith("cuda"):
        return None
    import torch

    return torch.cuda.get_device_name(torch.device(device))


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement, combined into the benchmark document (also written to ``args.out``)."""
    import torch

    data_dir = args.data_dir or shared_dir() / "data"
    fixtures_dir = args.fixtures_dir or shared_dir() / "fixtures" / "models"
    started, load_start = time.perf_counter(), loadavg()
    plan = plan_cells(args, data_dir, fixtures_dir)
    results = [measure(m, args, f"{k}/{len(plan)}") for k, m in enumerate(plan, 1)]
    memory = None
    if not args.no_memory and not args.smoke and "bert-base-random" in args.models and args.device == "cpu":
        print(f"[memory] bert-base-random stereoset-mlm at 1,920 and 3,840 sentences, {args.memory_repeats} children each",
              file=sys.stderr, flush=True)
        spec = MODELS["bert-base-random"]
        memory = measure_growth(model_path(spec, fixtures_dir=fixtures_dir, cache_dir=args.model_cache), data_dir,
                                batch_tokens=args.batch_tokens, threads=args.threads, repeats=args.memory_repeats)
    targets = report.check_targets(results, device=args.device) + report.issue19_targets(results, memory, device=args.device)
    doc = {
        "schema": SCHEMA,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": [sys.executable, "-m", "speed.run"] + list(args.argv),
        "notes": [RANDOM_INIT_NOTE,
                  "Times exclude model loading (load_s, separate). Medians of the timed runs after a warm-up; "
                  "CPU s = process CPU time over all threads (robust to other tenants). tok/s counts the tokens "
                  "whose (pseudo-)log-probability the method scores; ratios are of median wall times.",
                  reference_note(args.reference_autograd)],
        "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                    "cpu_count": os.cpu_count(), "torch_threads_default": torch.get_num_threads(),
                    "device": args.device, "gpu": _gpu_name(args.device),
                    "loadavg_start": load_start, "loadavg_end": loadavg()},
        "versions": _versions(),
        "git_commit": git_commit(),
        "settings": {"repeats": args.repeats, "fixture_repeats": args.fixture_repeats, "memory_repeats": args.memory_repeats,
                     "fixture_baseline_repeats": args.fixture_baseline_repeats,
                     "round_order": args.round_order, "isolation": args.isolation, "threads": args.threads,
                     "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
                     "malloc": {k: os.environ.get(k) for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")},
                     "ours_allocator": ours_allocator(),
                     "onednn_primitive_cache": os.environ.get("ONEDNN_PRIMITIVE_CACHE_CAPACITY"),
                     "tokenizers_parallelism": os.environ.get("TOKENIZERS_PARALLELISM"),
                     "device": args.device, "reference_autograd": args.reference_autograd,
                     "batch_tokens": args.batch_tokens, "minicons_batch_size": args.minicons_batch_size,
                     "slices": slice_sizes(args), "smoke": args.smoke, "warmup_items": args.warmup_items},
        "implementations": {n: get_implementation(n).description for n in args.impls},
        "results": results,
        "targets": targets,
        "memory": memory,
        "elapsed_s": time.perf_counter() - started,
    }
    return doc


def markdown(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    st = doc["settings"]
    where = f"{m['gpu']} ({m['device']}), " if m.get("gpu") else ""
    head = (f"Benchmark {doc['created_at']} — {where}{m['processor']}, {m['cpu_count']} CPUs, torch "
            f"{doc['versions']['torch']} ({st['threads'] or m['torch_threads_default']} threads, OMP_WAIT_POLICY="
            f"{st['omp_wait_policy'] or 'unset'}, malloc {'tuned' if any(st['malloc'].values()) else 'glibc default'}; "
            f"ours' allocator policy {st.get('ours_allocator', 'bounded')}, oneDNN primitive cache capacity "
            f"{st.get('onednn_primitive_cache') or 'default'}, TOKENIZERS_PARALLELISM "
            f"{st.get('tokenizers_parallelism', 'false') or 'unset'}), load average {m['loadavg_start']} → {m['loadavg_end']}, "
            f"{_rounds(st)} timed rounds (median), {st.get('round_order', 'fixed')} round order, "
            f"{doc['elapsed_s'] / 60:.1f} min.")
    parts = [head, "", report.summary_table(doc["results"]), "", report.detail_table(doc["results"]), "",
             "Where ours' time went (medians over the rounds; in the model: launching the batches and reading "
             "their values back, on the CPU the forward passes; host: the rest):", "",
             report.split_table(doc["results"]), "",
             "Study row (one run of the three masked-LM methods, one SharedWork, vs pll alone; the study floor: "
             "the distinct inputs of the three methods together, only their forward passes; lowest reachable: "
             "the study floor plus the tokenizing of the study's distinct texts):", "",
             report.study_table(doc["results"]), "",
             "Memory (BERT-base-sized, stereoset-mlm, ours' default allocator policy):", "",
             report.memory_table(doc.get("memory")), "",
             "Targets:", "", report.targets_table(doc["targets"]), "",
             *[f"Tokenizing: {n}" for n in report.tokenizing_notes(doc["results"])],
             *[f"Note: {n}" for n in doc["notes"]]]
    return "\n".join(parts) + "\n"


def _rounds(settings: dict[str, Any]) -> str:
    """The timed rounds per cell, as the header gives them.

    >>> _rounds({"repeats": 5, "fixture_repeats": 5})
    '5'
    >>> _rounds({"repeats": 5, "fixture_repeats": 15, "fixture_baseline_repeats": 5})
    '15 (fixture models; their slow baselines 5) / 5'
    """
    fixture = settings.get("fixture_repeats", settings["repeats"])
    baselines = settings.get("fixture_baseline_repeats", fixture)
    if fixture == settings["repeats"] and baselines == fixture:
        return str(fixture)
    slow = f"; their slow baselines {baselines}" if baselines != fixture else ""
    return f"{fixture} (fixture models{slow}) / {settings['repeats']}"


def apply_environment(args: argparse.Namespace) -> None:
    """Set the variables the options ask for, before torch loads; every worker process inherits them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    if args.omp_wait_policy != "inherit":  # before torch (and its OpenMP runtime) is loaded; children inherit it
        os.environ["OMP_WAIT_POLICY"] = args.omp_wait_policy.upper()
    if args.onednn_cache == "off":  # read by oneDNN at its first primitive: every worker process inherits it
        os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = "0"
    if args.tokenizers_parallelism != "inherit":  # read by the Rust tokenizer: every worker process inherits it
        os.environ["TOKENIZERS_PARALLELISM"] = args.tokenizers_parallelism
    if args.malloc == "tuned":  # read by glibc at process start: affects the worker processes, not this one
        os.environ.update(MALLOC_MMAP_THRESHOLD_=str(2**30), MALLOC_TRIM_THRESHOLD_=str(2**31))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    args.argv = argv
    # a smoke run checks the machinery; its numbers are not measurements, so it takes no lock
    try:
        with contextlib.nullcontext() if args.smoke else machine_lock(args.lock):
            apply_environment(args)
            doc = run(args)
    except MachineLockError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = output_path(args.out, args.out_folder, doc["created_at"])
    text = markdown(doc)
    print(text)  # first: the tables survive a failed write
    try:
        atomic_write_json(out, doc)
        atomic_write_text(out.with_suffix(".md"), text)
    except OSError as exc:
        print(f"error: cannot write the results to {out}: {problem_of(exc)} (the tables are above)", file=sys.stderr)
        return 2
    print(f"wrote {out} and {out.with_suffix('.md')}", file=sys.stderr)
    bad = [r for r in doc["results"] if r["numbers_agree"] is False]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
