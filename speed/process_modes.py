"""``python -m speed.process_modes``: one cell in several worker processes per implementation, side by side.

``speed.run`` times each implementation in one worker process for the whole cell, so a state that
one process falls into and keeps for many rounds moves that implementation's median and nothing
else. Issue 35 (sixteenth session) found such states: on the 2-core development machine ours'
rounds of tiny-bert ``pll`` ran at ~2.0 s for some stretches and ~2.6 s for others, the difference
all in the forward passes (``run.execution``), while the floor's process stayed at ~2.0–2.2 s.
This runs ``--processes`` workers of each implementation (ours and the floor by default), one
round of each per turn in rotating order, and prints every process's rounds and median: a
per-process state shows as one column moving while the others stay; a machine-wide one moves
them all. Nothing is written; the numbers are for reading, not targets.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any, Sequence

from speed.cell import CellSpec, ProcessWorker
from speed.models import model_path
from speed.specs import ALL_METHODS, METHOD_DATASET, MODELS


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    from stereoset_eval.scoring.settings import DEFAULT_BATCH_TOKENS

    p = argparse.ArgumentParser(prog="python -m speed.process_modes", description=__doc__.split("\n\n")[0])
    fixtures = [name for name, spec in MODELS.items() if spec.origin == "fixture"]
    p.add_argument("--model", default="tiny-bert", choices=fixtures, help="fixture model (default tiny-bert)")
    p.add_argument("--method", default="pll", choices=list(ALL_METHODS), help="method (default pll)")
    p.add_argument("--impls", nargs="+", default=["ours", "floor"], choices=["ours", "floor"], metavar="IMPL",
                   help="implementations, each in --processes processes (default: ours floor)")
    p.add_argument("--processes", type=int, default=2, help="worker processes per implementation (default 2)")
    p.add_argument("--rounds", type=int, default=12, help="timed rounds of every process (default 12)")
    p.add_argument("--items", type=int, default=None, help="the first N items of the method's data (default: all)")
    p.add_argument("--batch-tokens", type=int, default=DEFAULT_BATCH_TOKENS, help="token budget per batch")
    p.add_argument("--data-dir", type=Path, default=None, help="shared data folder (default: ../shared/data)")
    p.add_argument("--fixtures-dir", type=Path, default=None, help="fixture models (default: ../shared/fixtures/models)")
    args = p.parse_args(argv)
    for name in ("processes", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.items is not None and args.items < 1:
        p.error(f"--items must be at least 1, got {args.items}")
    if args.method not in MODELS[args.model].methods:
        p.error(f"{args.model} has no method {args.method}; its methods: {', '.join(MODELS[args.model].methods)}")
    return args


def rotation(names: Sequence[str], turn: int) -> list[str]:
    """The order of turn ``turn``: ``names`` rotated by the turn, so no process always runs first.

    >>> rotation(["a", "b", "c"], 0), rotation(["a", "b", "c"], 4)
    (['a', 'b', 'c'], ['b', 'c', 'a'])
    """
    k = turn % len(names)
    return list(names[k:]) + list(names[:k])


def table(times: dict[str, list[float]]) -> str:
    """One row per round, one column per process, then each process's median.

    >>> print(table({"ours 1": [2.0, 2.6], "floor 1": [2.1, 2.0]}))
    | round | ours 1 | floor 1 |
    |---:|---:|---:|
    | 1 | 2.000 | 2.100 |
    | 2 | 2.600 | 2.000 |
    | median | 2.300 | 2.050 |
    """
    names = list(times)
    lines = ["| round | " + " | ".join(names) + " |", "|---:|" + "---:|" * len(names)]
    for r in range(max(map(len, times.values()), default=0)):
        lines.append(f"| {r + 1} | " + " | ".join(f"{times[n][r]:.3f}" if r < len(times[n]) else "—" for n in names) + " |")
    lines.append("| median | " + " | ".join(f"{statistics.median(times[n]):.3f}" if times[n] else "—" for n in names) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from speed.run import shared_dir

    args = parse_args(argv)
    data_dir = args.data_dir or shared_dir() / "data"
    fixtures_dir = args.fixtures_dir or shared_dir() / "fixtures" / "models"
    spec = MODELS[args.model]
    path = model_path(spec, fixtures_dir=fixtures_dir)
    names = [f"{impl} {k + 1}" for impl in args.impls for k in range(args.processes)]
    workers: dict[str, Any] = {}
    for name in names:
        cell = CellSpec(impl=name.split()[0], model=args.model, model_path=str(path), kind=spec.kind, method=args.method,
                        dataset=METHOD_DATASET[args.method], data_dir=str(data_dir), n_items=args.items,
                        warmup_items=10, threads=None, batch_tokens=args.batch_tokens, minicons_batch_size=32)
        workers[name] = ProcessWorker(cell)
    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        for name, worker in workers.items():
            state = worker.wait_ready()
            if state.get("status") != "ready":
                print(f"error: speed.process_modes: {name} did not start: {state.get('reason', state)}", file=sys.stderr)
                return 1
        for turn in range(args.rounds):
            order = rotation(names, turn)
            for name in order:
                reply = workers[name].run_once()
                if reply.get("status") != "ok":
                    print(f"error: speed.process_modes: {name}, round {turn + 1}: {reply.get('reason', reply)}", file=sys.stderr)
                    return 1
                times[name].append(reply["wall_s"])
            print(f"round {turn + 1}: " + ", ".join(f"{n} {times[n][-1]:.3f} s" for n in order), file=sys.stderr, flush=True)
    finally:
        for worker in workers.values():
            worker.finish()
    print(f"{args.model} {args.method}, {args.processes} processes per implementation, {args.rounds} rounds "
          "(wall s; the floor: its forward passes alone, as speed.run times it):\n")
    print(table(times))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
