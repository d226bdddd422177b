"""Packaging: one import namespace over the design card's folders, nothing generic at the top."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def package_folders() -> set[str]:
    """Every folder with an ``__init__.py`` under a mapped folder, as its ``stereoset_eval.*`` name."""
    names = set()
    for package, folder in SETUPTOOLS["package-dir"].items():
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            if "__pycache__" in rel.parts:
                continue
            names.add(".".join((package, *rel.parts)))
    return names


def test_every_package_folder_is_listed():
    assert set(SETUPTOOLS["packages"]) == package_folders()


def test_every_package_is_under_one_namespace():
    assert all(p == "stereoset_eval" or p.startswith("stereoset_eval.") for p in SETUPTOOLS["packages"])


def test_python_dash_m_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "stereoset_eval", "--version"], capture_output=True, text=True,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("stereoset-eval ")


@pytest.mark.slow
def test_wheel_exposes_only_stereoset_eval(tmp_path):
    """A built wheel holds ``stereoset_eval/`` and its dist-info, nothing else at the top."""
    import shutil
    import zipfile

    source = tmp_path / "source"  # a copy of the tracked files: the build leaves nothing in the checkout
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True)
    for rel in filter(None, tracked.stdout.split("\0")):
        if (REPO / rel).is_file():
            (source / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, source / rel)
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                          "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True)
    if out.returncode != 0 and "No module named" in out.stderr:
        pytest.skip(f"cannot build a wheel here: {out.stderr.strip().splitlines()[-1]}")
    assert out.returncode == 0, out.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    tops = {name.split("/", 1)[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"stereoset_eval"}
    names = zipfile.ZipFile(wheel).namelist()
    assert "stereoset_eval/data/default_study.toml" in names
    assert "stereoset_eval/curation/loaders/registry.py" in names
