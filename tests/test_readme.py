"""README.md and docs/ stay true: the CLI reference is the parsers' current --help, the examples run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stereoset_eval.cli.reference import END, PYTHON, START, render_cli_reference, replace_block, subcommands

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
CLI_DOC = REPO / "docs" / "cli.md"
STUDIES_DOC = REPO / "docs" / "studies.md"


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return [b.split("```", 1)[0] for b in text.split(f"```{lang}\n")[1:]]


@pytest.mark.skipif(sys.version_info[:2] != PYTHON, reason=f"argparse lays help out differently outside Python {PYTHON}")
def test_cli_reference_matches_every_commands_help():
    text = CLI_DOC.read_text(encoding="utf-8")
    assert replace_block(text, render_cli_reference()) == text, "docs/cli.md is stale: run `make readme`"


def test_cli_reference_covers_every_subcommand():
    from stereoset_eval.cli.main import build_parser

    block = CLI_DOC.read_text(encoding="utf-8").split(START, 1)[1].split(END, 1)[0]
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
        "## Studies",
        "## Python API",
        "## Methods and the references they match",
        "## Data sources and licenses",
        "## What works, and known limitations",
        "## Documentation",
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


def test_readme_stays_short_and_links_every_doc():
    text = _readme()
    assert len(text.splitlines()) <= 300, "README.md grew past 300 lines: move detail into docs/"
    for doc in sorted((REPO / "docs").glob("*.md")):
        assert f"docs/{doc.name}" in text, f"README.md does not link docs/{doc.name}"


def test_studies_doc_example_parses():
    from stereoset_eval.study.config import parse_config, tomllib

    blocks = _blocks(STUDIES_DOC.read_text(encoding="utf-8"), "toml")
    assert blocks, "docs/studies.md has no ```toml study example"
    for block in blocks:
        config = parse_config(tomllib.loads(block), source="README.md")
        assert len(config.models) >= 3 and config.analysis.compare


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_and_readme_targets_run_the_cli():
    out = subprocess.run(["make", "-n", "-W", "pyproject.toml", "demo", "readme", "DEMO_ARGS=--limit 3"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    assert ".venv/bin/stereoset-eval demo --limit 3" in out
    assert ".venv/bin/python -m stereoset_eval.cli.reference docs/cli.md" in out
