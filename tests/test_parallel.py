"""The parallel run's units of work (tests/conftest.py): what `make test` hands to each pytest-xdist worker."""

from __future__ import annotations

from pathlib import Path

from conftest import FIRST, XDIST_UNITS, xdist_unit  # tests/conftest.py

TESTS = Path(__file__).resolve().parent


def test_every_named_module_exists():
    """A renamed or removed module would silently leave its unit (a Ray test beside the other Ray tests)."""
    named = set(XDIST_UNITS) | {u for u in FIRST if u.endswith(".py")}
    assert named and all((TESTS.parent / m).is_file() for m in named), sorted(named)
    units = set(XDIST_UNITS.values()) | {xdist_unit(f"tests/{p.name}::t") for p in TESTS.glob("test_*.py")}
    assert set(FIRST) <= units


def test_every_real_ray_instance_is_in_one_unit():
    """Each module that runs the real Ray (``pytest.importorskip("ray")``: a cluster or a local instance) is
    in the unit ``ray``, so no two Ray instances run at once (fakes of Ray may run anywhere)."""
    marker = 'importorskip("ray"'
    real_ray = [p.name for p in TESTS.glob("test_*.py") if p.name != Path(__file__).name
                and marker in p.read_text(encoding="utf-8")]
    assert {"test_study_ray_cluster.py", "test_study_run.py"} <= set(real_ray)
    assert {xdist_unit(f"tests/{name}::test") for name in real_ray} == {"ray"}


def test_a_module_is_one_unit_and_a_named_unit_spans_modules():
    assert xdist_unit("tests/test_demo.py::test_a[x::y]") == xdist_unit("tests/test_demo.py::test_b") == "tests/test_demo.py"
    assert xdist_unit("tests/test_study_run.py::test_ray_executor_gives_the_same_numbers") == "ray"
    assert xdist_unit("tests/test_study_ray_cluster.py::test_a_ray_client_driver_gives_the_local_numbers") == "ray"
