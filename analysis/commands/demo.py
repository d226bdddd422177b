"""``stereoset-eval demo``: the main job a new user runs first (``make demo``).

For now it loads both benchmarks from the data directory (downloading and verifying them
when allowed) and prints an inventory; it grows into curate → score → report.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from analysis.commands._common import resolve_data
from curation.inventory import flag_counts, inventory_table
from curation.loaders.registry import load_items


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="load both benchmarks and print an inventory (the `make demo` job)")
    p.add_argument("--data-dir", type=Path, help="data directory (default $STEREOSET_EVAL_DATA or ~/.cache/stereoset-eval/data)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    items = []
    for bench in ("stereoset", "crows-pairs"):
        path = resolve_data(bench, None, args.data_dir)
        loaded = load_items(bench, path)
        print(f"loaded {len(loaded)} {bench} items from {path}")
        items += loaded
    print()
    print(inventory_table(items).to_string(index=False))
    print()
    print(flag_counts(items).to_string(index=False))
    return 0
