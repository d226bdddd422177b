"""The layers, checked: foundation < curation < scoring | analysis < study < cli.

Every import of the namespace is read with ``ast`` across ``pyproject.toml``'s ``package-dir``
mapping (:mod:`tools.layers`), lazy (in-function) and ``TYPE_CHECKING`` imports included: none may
go up a floor or sideways to a sibling, and no modules may import each other in a circle. The
checker is shown to fail on planted imports in a temporary module tree.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _load_checker():
    spec = importlib.util.spec_from_file_location("tools_layers", REPO / "tools" / "layers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


layers = _load_checker()


def test_the_repository_keeps_its_floors_and_has_no_circle():
    mods = layers.modules(REPO)
    assert {"stereoset_eval.foundation.items", "stereoset_eval.analysis.benchmarks.base",
            "stereoset_eval.scoring.settings", "stereoset_eval.cli.main"} <= set(mods)  # the mapping is followed
    found = layers.all_imports(REPO)
    assert len(found) > 500 and any(i.lazy for i in found)
    bad, circle = layers.violations(found), layers.cycle(layers.graph(found, mods))
    assert not bad, "\n".join(map(str, bad))
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    dirs = {f"stereoset_eval.{d}": d for d in ("foundation", "curation", "scoring", "analysis", "study", "cli")}
    (tmp_path / "pyproject.toml").write_text("[tool.setuptools.package-dir]\n" + "".join(
        f'"{pkg}" = "{folder}"\n' for pkg, folder in {"stereoset_eval": "stereoset_eval", **dirs}.items()))
    for folder in ["stereoset_eval", *dirs.values()]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "__init__.py").write_text('__version__ = "0"\n' if folder == "stereoset_eval" else "")
    for rel, text in files.items():
        (tmp_path / rel).write_text(textwrap.dedent(text))
    return tmp_path


CLEAN = {
    "foundation/items.py": "from stereoset_eval import __version__\n",
    "curation/load.py": "from stereoset_eval.foundation.items import __name__ as _n\n",
    "analysis/metrics.py": "from . import report\nfrom stereoset_eval.curation import load\n",
    "analysis/report.py": "import stereoset_eval.foundation.items\n",
    "scoring/score.py": "from stereoset_eval.foundation import items\n",
    "study/run.py": "from stereoset_eval.analysis import metrics\nfrom stereoset_eval.scoring import score\n",
    "cli/main.py": "from stereoset_eval.study.run import __name__ as _n\n",
}


def test_a_clean_tree_passes(tmp_path):
    assert layers.check(_tree(tmp_path, CLEAN)) == ([], None)


@pytest.mark.parametrize("rel, text, kind, target, lazy", [
    ("foundation/items.py", "def f():\n    from stereoset_eval.cli.main import run\n", "upward",
     "stereoset_eval.cli.main", True),  # a lazy upward import
    ("curation/load.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from stereoset_eval.study import run\n",
     "upward", "stereoset_eval.study.run", True),
    ("scoring/score.py", "import stereoset_eval.analysis.metrics\n", "sideways", "stereoset_eval.analysis.metrics",
     False),
    ("analysis/report.py", "from ..scoring import score\n", "sideways", "stereoset_eval.scoring.score", False),
    ("study/run.py", "from stereoset_eval import cli\n", "upward", "stereoset_eval.cli", False),
])
def test_a_planted_import_fails_the_check(tmp_path, rel, text, kind, target, lazy):
    bad, _ = layers.check(_tree(tmp_path, {**CLEAN, rel: text}))
    assert [(v.kind, v.imp.target, v.imp.lazy, v.imp.path.name) for v in bad] == [(kind, target, lazy, Path(rel).name)]
    assert str(bad[0]).startswith(f"{tmp_path / rel}:")  # file:line, what imports what


def test_a_planted_circle_fails_the_check(tmp_path):
    circle = {**CLEAN, "analysis/report.py": "def f():\n    from stereoset_eval.analysis import metrics\n"}
    bad, found = layers.check(_tree(tmp_path, circle))
    assert bad == [] and found == ["stereoset_eval.analysis.metrics", "stereoset_eval.analysis.report",
                                   "stereoset_eval.analysis.metrics"]
