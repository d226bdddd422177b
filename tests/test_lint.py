"""Static checks run with the tests: ruff (pyflakes and pycodestyle's error classes) over the code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("stereoset_eval", "foundation", "curation", "scoring", "analysis", "study", "cli", "speed", "tests")


def test_ruff_finds_nothing():
    try:
        import ruff  # noqa: F401  (the test extra installs it)
    except ImportError:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", *FOLDERS],
                         cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr

