"""mypy over the installed namespace: the repository's layer folders seen as ``stereoset_eval.*``.

mypy cannot follow setuptools' editable-install import hook, so the test lays out a folder of
symbolic links (``stereoset_eval/curation`` → ``curation/`` …) and checks the package there
with the project's ``[tool.mypy]`` settings.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[test]')")
    layout = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    root = tmp_path / "stereoset_eval"
    root.mkdir()
    for src in (REPO / layout["stereoset_eval"]).glob("*.py"):
        shutil.copy2(src, root / src.name)
    for package, folder in layout.items():
        if package != "stereoset_eval":
            (root / package.split(".", 1)[1]).symlink_to(REPO / folder, target_is_directory=True)
    out = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                          "--cache-dir", str(tmp_path / ".mypy_cache"), "-p", "stereoset_eval"],
                         cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]
