"""Every docstring example in the installed package runs (metrics document themselves by example).

Doctests are collected by module name under ``stereoset_eval.*`` rather than by file path, so each
module is imported once, under the one name the package gives it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


LAYERS = ("foundation", "curation", "scoring", "analysis", "study", "cli")
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def modules_with_examples() -> list[str]:
    names = []
    layers = [importlib.import_module(f"stereoset_eval.{layer}") for layer in LAYERS]
    infos = [info for layer in layers for info in pkgutil.walk_packages(layer.__path__, prefix=layer.__name__ + ".")]
    for info in infos:
        spec = importlib.util.find_spec(info.name)
        origin = getattr(spec, "origin", None)
        if origin and origin.endswith(".py"):
            with open(origin, encoding="utf-8") as fh:
                if ">>>" in fh.read():
                    names.append(info.name)
    return sorted(names)


MODULES = modules_with_examples()


def test_examples_were_found():
    assert len(MODULES) >= 10, MODULES  # the metric and curation docstrings carry examples


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
