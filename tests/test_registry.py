"""foundation.registry: the one name -> object table behind benchmarks, statistics and methods."""

from __future__ import annotations

import pytest

from stereoset_eval.analysis.benchmarks import BENCHMARKS
from stereoset_eval.analysis.statistics import STATISTICS
from stereoset_eval.foundation.errors import UnknownNameError
from stereoset_eval.foundation.registry import Registry
from stereoset_eval.scoring.methods import METHODS


def test_add_get_remove_and_mapping_behaviour():
    reg: Registry[object] = Registry("widget")
    a, b = object(), object()
    assert reg.add("a", a) is a
    assert reg.add("a", a) is a  # the same object again: a no-op
    with pytest.raises(ValueError, match="widget 'a' is already registered"):
        reg.add("a", b)
    reg.add("b", b)
    assert list(reg) == ["a", "b"] and len(reg) == 2 and "a" in reg and "c" not in reg
    assert reg.get("c") is None and reg.get("c", 1) == 1
    assert reg.remove("a") is a and list(reg) == ["b"]


def test_unknown_name_lists_the_known_ones_with_a_suggestion():
    reg: Registry[int] = Registry("widget")
    reg.add("alpha", 1)
    reg.add("beta", 2)
    with pytest.raises(UnknownNameError, match=r"unknown widget 'alpa'\. Did you mean 'alpha'\? Known: alpha, beta"):
        reg["alpa"]
    with pytest.raises(KeyError):  # still a KeyError for code that expects a mapping
        reg["gamma"]
    with pytest.raises(UnknownNameError):
        reg.remove("gamma")


def test_the_project_tables_are_registries():
    for table, kind in ((BENCHMARKS, "benchmark"), (STATISTICS, "statistic"), (METHODS, "scoring method")):
        assert isinstance(table, Registry) and table.kind == kind and len(table) > 0
        with pytest.raises(UnknownNameError, match=f"unknown {kind} 'no-such-name'"):
            table["no-such-name"]
