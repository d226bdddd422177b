"""How much host work the engine's group overlap hides, on a simulated asynchronous device.

No GPU is lent to every session, so this measures the overlap's mechanism on the CPU: a scorer
that stages each batch on the host exactly as :class:`~stereoset_eval.scoring.scorers.Scorer` does
(gather index, padded input arrays), then hands it to a "device" that takes a fixed time per
padded token, one batch after another, while ``launch`` returns at once; ``result()`` waits for
the batch to finish, as ``.cpu()`` waits on CUDA. The per-token time is chosen so the whole run's
device time is ``--device-s``. ``score_items`` then runs with the overlap off and on (the
scorer's ``asynchronous`` flag, which the real scorer sets on CUDA), interleaved, cache on (cache
writes are part of the host work). The values are placeholders: only the timing means anything,
and it says what the engine's order of work allows, not what a particular GPU achieves.

    python -m speed.simulated_device --model tiny-bert --method pll --device-s 1.0
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from speed.inputs import load_slice


class _Pending:
    def __init__(self, ready_at: float, rows: Sequence[Any]) -> None:
        self.ready_at, self.rows = ready_at, rows

    def result(self) -> list[list[float]]:
        time.sleep(max(0.0, self.ready_at - time.perf_counter()))
        return [[-1.0] * len(row.gather) for row in self.rows]

    def flat(self) -> list[float]:
        """Every gather's value in row order (what the real scorer's handle gives a batch of masked copies)."""
        time.sleep(max(0.0, self.ready_at - time.perf_counter()))
        codes = getattr(self.rows, "read_codes", None)
        return [-1.0] * len(codes) if codes is not None else [v for out in self.result() for v in out]


def simulated_scorer(per_token_s: float, overlap: bool) -> type:
    """A :class:`Scorer` subclass whose forward passes run on the simulated device."""
    from stereoset_eval.scoring.copies import CopyBatch
    from stereoset_eval.scoring.requests import gather_arrays
    from stereoset_eval.scoring.table import TableBatch
    from stereoset_eval.scoring.scorers import Scorer

    class SimulatedScorer(Scorer):
        tokens = 0
        free_at = 0.0
        asynchronous = overlap

        def launch(self, rows: Sequence[Any]) -> _Pending:
            if isinstance(rows, (CopyBatch, TableBatch)):  # the real scorer's host staging of copies and table rows
                ids = rows.arrays(self.pad_id)[0]
                padded = ids.shape[0] * ids.shape[1]
            else:
                gather_arrays(rows)  # the real scorer's host staging
                self._inputs(rows)
                padded = len(rows) * max(len(row.input_ids) for row in rows)
            cls = type(self)
            cls.tokens += padded
            start = max(time.perf_counter(), cls.free_at)
            cls.free_at = start + padded * per_token_s
            return _Pending(cls.free_at, rows)

    return SimulatedScorer


def measure(model: Path, method: str, dataset: str, data_dir: Path, device_s: float, rounds: int,
            n_items: int | None = None) -> dict[str, Any]:
    """Median wall seconds with the overlap off and on, the device's share fixed at ``device_s``
    (the first ``n_items`` items of ``dataset``; all of them if None)."""
    from stereoset_eval.scoring import scorers
    from stereoset_eval.scoring.api import score_items

    items = load_slice(data_dir, dataset, n_items)
    real = scorers.Scorer
    walls: dict[bool, list[float]] = {False: [], True: []}
    try:
        counting = scorers.Scorer = simulated_scorer(0.0, False)
        score_items(items, model=str(model), method=method, device="cpu", use_cache=False)  # warm-up; counts tokens
        per_token = device_s / counting.tokens
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(rounds):
                for overlap in (False, True):
                    scorers.Scorer = simulated_scorer(per_token, overlap)
                    started = time.perf_counter()
                    out = score_items(items, model=str(model), method=method, device="cpu",
                                      cache_dir=Path(tmp) / f"{r}-{overlap}")
                    walls[overlap].append(time.perf_counter() - started)
                    assert out.provenance["run"]["execution"]["overlap"] is overlap
    finally:
        scorers.Scorer = real
    off, on = statistics.median(walls[False]), statistics.median(walls[True])
    return {"model": model.name, "method": method, "dataset": dataset, "n_items": len(items), "device_s": device_s,
            "sequential_s": round(off, 3), "overlapped_s": round(on, 3), "hidden_s": round(off - on, 3)}


def main(argv: Sequence[str] | None = None) -> None:
    from speed.run import shared_dir

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny-bert", help="fixture model name")
    parser.add_argument("--method", default="pll")
    parser.add_argument("--dataset", default=None, help="crows-pairs or stereoset-intra (default: the method's)")
    parser.add_argument("--device-s", type=float, default=1.0, help="simulated device seconds for the whole run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--items", type=int, default=None, help="the first N items (default: the whole dataset)")
    args = parser.parse_args(argv)
    shared = shared_dir()
    dataset = args.dataset or ("stereoset-intra" if args.method.startswith("stereoset") else "crows-pairs")
    row = measure(shared / "fixtures" / "models" / args.model, args.method, dataset, shared / "data",
                  args.device_s, args.rounds, args.items)
    print(f"{row['model']} {row['method']} on {row['dataset']}, simulated device {row['device_s']:.2f} s: "
          f"sequential {row['sequential_s']:.3f} s, overlapped {row['overlapped_s']:.3f} s "
          f"({row['hidden_s']:.3f} s of host work hidden)")


if __name__ == "__main__":
    main()
