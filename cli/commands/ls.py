"""``stereoset-eval ls``: list known benchmarks, formats, data files and registries."""

from __future__ import annotations

import argparse
import importlib
from typing import Mapping

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


def describe(entry: object) -> str:
    """First line of an entry's description: the text itself, its ``description``, or its own docstring."""
    text: object
    if isinstance(entry, str):
        text = entry
    else:
        text = getattr(entry, "description", None)
        if not isinstance(text, str) or not text:
            own = getattr(entry, "__doc__", None)  # a function's or class's own docstring, never str's/dict's
            text = own if isinstance(own, str) and own != type(entry).__doc__ or callable(entry) else ""
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def _print(title: str, entries: Mapping[str, object]) -> None:
    print(f"{title}:")
    for name in sorted(entries):
        first = describe(entries[name])
        print(f"  {name:24s} {first}")
    print()


def run(args: argparse.Namespace) -> int:
    _print("benchmarks", descriptions())
    _print("sources", dict(SOURCES))
    _print("formats", dict(FORMATS))
    _print("data files (manifest)", {k: v["description"] + (" [bundled]" if v.get("bundled") else "")
                                      for k, v in manifest().items()})
    for title, module, attr in REGISTRIES:
        try:
            registry = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError):
            continue
        _print(title, dict(registry))
    return 0
