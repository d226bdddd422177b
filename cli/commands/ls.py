"""``stereoset-eval ls``: list known benchmarks, formats, data files and registries."""

from __future__ import annotations

import argparse
import importlib

from stereoset_eval.curation.loaders.download import manifest
from stereoset_eval.foundation.items import SOURCES
from stereoset_eval.analysis.benchmarks import descriptions
from stereoset_eval.curation.loaders.registry import FORMATS

# (title, module, attribute) of optional registries, listed when their module exists
REGISTRIES: tuple[tuple[str, str, str], ...] = (
    ("scoring methods", "stereoset_eval.scoring.methods", "METHODS"),
    ("curation rules", "stereoset_eval.curation.rules", "RULES"),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ls", help="list known benchmarks, formats, data files, methods and rules")
    p.set_defaults(func=run)


def _print(title: str, entries: dict[str, object]) -> None:
    print(f"{title}:")
    for name in sorted(entries):
        desc = entries[name]
        desc = getattr(desc, "description", None) or getattr(desc, "__doc__", None) or desc
        first = str(desc).strip().splitlines()[0] if desc else ""
        print(f"  {name:24s} {first}")
    print()


def run(args: argparse.Namespace) -> int:
    _print("benchmarks", descriptions())
    _print("sources", dict(SOURCES))
    _print("formats", dict(FORMATS))
    _print("data files (manifest)", {k: v["description"] for k, v in manifest().items()})
    for title, module, attr in REGISTRIES:
        try:
            registry = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
        _print(title, dict(registry))
    return 0
