"""``stereoset-eval inventory``: counts per split / task / bias type / direction, and flags."""

from __future__ import annotations

import argparse

from stereoset_eval.cli.commands._common import add_data_args, load_from_args
from stereoset_eval.curation.inventory import flag_counts, inventory_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("inventory", help="count items per source, bias type and direction; list load-time flags")
    add_data_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    items = load_from_args(args)
    print(f"{len(items)} items from {items[0].provenance.source_file if items else '-'}")
    print(inventory_table(items).to_string(index=False))
    flags = flag_counts(items)
    if len(flags):
        print("\nload-time flags (items):")
        print(flags.to_string(index=False))
    return 0
