"""README.md stays true: its CLI reference is the parsers' current --help, its examples run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stereoset_eval.cli.reference import END, PYTHON, START, render_cli_reference, replace_block, subcommands

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return [b.split("```", 1)[0] for b in text.split(f"```{lang}\n")[1:]]


@pytest.mark.skipif(sys.version_info[:2] != PYTHON, reason=f"argparse lays help out differently outside Python {PYTHON}")
def test_cli_reference_matches_every_commands_help():
    text = _readme()
    assert replace_block(text, render_cli_reference()) == text, "README.md's CLI reference is stale: run `make readme`"


def test_cli_reference_covers_every_subcommand():
    from stereoset_eval.cli.main import build_parser

    block = _readme().split(START, 1)[1].split(END, 1)[0]
    for name in subcommands(build_parser()):
        assert f"### `stereoset-eval {name}`" in block, name


def test_replace_block_only_touches_the_marked_part():
    text = f"intro\n{START}\nold\n{END}\noutro\n"
    assert replace_block(text, "new") == f"intro\n{START}\n\nnew\n\n{END}\noutro\n"
    with pytest.raises(ValueError, match="markers"):
        replace_block("no markers", "new")


def test_check_mode_reports_a_stale_readme(tmp_path):
    from stereoset_eval.cli.reference import main

    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n{START}\nold\n{END}\n", encoding="utf-8")
    assert main([str(stale), "--check"]) == 1
    assert main([str(stale)]) == 0 and main([str(stale), "--check"]) == 0
    assert "### `stereoset-eval study`" in stale.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "heading",
    [
        "## What it measures, and why a single ss misleads",
        "## Quick start",
        "## Studies: many models, one cross-benchmark report",
        "## Python API",
        "## Methods and the references they match",
        "## Provenance",
        "## Ids",
        "## Data sources and licenses",
        "## What works, and known limitations",
        "## Command-line reference",
    ],
)
def test_readme_has_the_sections_a_new_user_needs(heading):
    assert f"\n{heading}\n" in _readme()


def test_readme_names_every_method_and_manifest_file():
    from stereoset_eval.curation.loaders.download import manifest
    from stereoset_eval.scoring.methods import METHODS

    text = _readme()
    for name in list(METHODS) + list(manifest()):
        assert f"`{name}`" in text, name


def test_readme_python_example_imports_exist():
    code = _blocks(_readme(), "python")[0]
    imports = "\n".join(line for line in code.splitlines() if line.startswith(("from ", "import ")))
    exec(compile(imports.replace("  ", " "), "README.md", "exec"), {})  # noqa: S102 - our own README


def test_readme_study_example_parses():
    from stereoset_eval.study.config import parse_config, tomllib

    blocks = _blocks(_readme(), "toml")
    assert blocks, "README.md has no ```toml study example"
    for block in blocks:
        config = parse_config(tomllib.loads(block), source="README.md")
        assert len(config.models) >= 3 and config.analysis.compare


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_and_readme_targets_run_the_cli():
    out = subprocess.run(["make", "-n", "-W", "pyproject.toml", "demo", "readme", "DEMO_ARGS=--limit 3"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    assert ".venv/bin/stereoset-eval demo --limit 3" in out
    assert ".venv/bin/python -m stereoset_eval.cli.reference README.md" in out


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_and_make_demo_keep_each_others_environment(tmp_path):
    """With both stamps newer than pyproject.toml, neither target installs anything or deletes a stamp."""
    import os
    import time

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    future = time.time() + 60
    for extra in ("test", "labelstudio"):
        stamp = venv / f".stamp-{extra}"
        stamp.touch()
        os.utime(stamp, (future, future))
    for target in ("test", "demo"):
        out = subprocess.run(["make", "-n", target, f"VENV={venv}"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout
        assert "pip install" not in out and ".stamp-" not in out, out
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "rm -f $(VENV)/.stamp-" not in text
