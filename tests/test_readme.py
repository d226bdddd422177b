"""README.md and docs/ stay true: the CLI reference is the parsers' current --help, the examples run."""

from __future__ import annotations

import json
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


# ---- every README code block, run against the fixtures ------------------------------------------------------------

FIXTURE_MODELS = {"bert-base-uncased": "tiny-bert", "roberta-base": "tiny-roberta", "distilroberta-base": "tiny-roberta",
                  "gpt2": "tiny-gpt2"}


def _bash_commands() -> list[str]:
    lines = [ln.split("#", 1)[0].strip() for block in _blocks(_readme(), "bash") for ln in block.splitlines()]
    return [ln for ln in lines if ln]


def _fixture_env(tmp_path: Path) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "STEREOSET_EVAL_DATA"}  # the bundled data only
    env.update(HF_HOME=str(tmp_path / "hf"), STEREOSET_EVAL_CACHE=str(tmp_path / "cache"), HF_ENDPOINT="http://127.0.0.1:9")
    return env


def _fixture_study(shared_dir: Path, tmp_path: Path) -> Path:
    """The study example of docs/studies.md with fixture models and a 2-item limit, as my_study.toml."""
    lines = _blocks(STUDIES_DOC.read_text(encoding="utf-8"), "toml")[0].splitlines()
    out: list[str] = []
    used: set[str] = set()
    skipping = False
    for i, line in enumerate(lines):
        if skipping and not line.startswith("[["):
            continue  # the rest of a model block whose fixture is taken
        skipping = False
        hub_id = line.split('"')[1] if line.startswith('id = "') else None
        if hub_id in FIXTURE_MODELS:
            if FIXTURE_MODELS[hub_id] in used:  # one model per id: a study refuses the same model twice
                out.pop()  # its [[models]] line
                skipping = True
                continue
            used.add(FIXTURE_MODELS[hub_id])
            out.append(f'id = "{shared_dir / "fixtures" / "models" / FIXTURE_MODELS[hub_id]}"')
        else:
            out.append(line)
    text = "\n".join(out).replace("# limit = 100", "limit = 2").replace("bootstrap = 1000", "bootstrap = 20")
    path = tmp_path / "my_study.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_readme_commands_are_known():
    """Every shell line of the README is one the next test runs (or `make test`, this suite)."""
    for cmd in _bash_commands():
        assert cmd in ("make demo", "make test") or "make demo DEMO_ARGS=" in cmd, cmd


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_readme_make_demo_offline_ends_in_one_clear_message(tmp_path):
    """`make demo` as pasted, with no hub and no cache: one message naming the offline form, in seconds."""
    import time

    assert "make demo" in _bash_commands()
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "stereoset_eval", "demo", "--output", str(tmp_path / "run")],
                         capture_output=True, text=True, env=_fixture_env(tmp_path), timeout=120)
    assert out.returncode == 2 and "HF_HUB_OFFLINE=1" in out.stderr and "Retry" not in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1 and time.perf_counter() - started < 20


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_readme_offline_demo_form_runs_to_a_results_table(shared_dir, tmp_path):
    """The README's offline form, as make runs it (--limit lowered to 2 for the test budget)."""
    import shlex

    (cmd,) = [c for c in _bash_commands() if "DEMO_ARGS=" in c]
    words = shlex.split(cmd.replace("../shared", str(shared_dir)))
    env = _fixture_env(tmp_path)
    env.update(w.split("=", 1) for w in words[: words.index("make")])
    demo_args = next(w for w in words if w.startswith("DEMO_ARGS=")).split("=", 1)[1]
    planned = subprocess.run(["make", "-n", "demo", f"DEMO_ARGS={demo_args}", f"VENV={tmp_path / 'venv'}", "-o",
                              f"{tmp_path / 'venv'}/.stamp-labelstudio"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout
    assert f"stereoset-eval demo {demo_args}" in planned
    out = subprocess.run([sys.executable, "-m", "stereoset_eval", "demo", *shlex.split(demo_args), "--limit", "2",
                          "--no-progress"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "LIMITED RUN (first 2 items" in out.stdout and "| tiny-gpt2" in out.stdout
    assert (tmp_path / "runs" / "demo-limit-2" / "results.json").is_file()


def test_readme_python_example_runs(shared_dir, tmp_path, monkeypatch, capsys):
    """The Python API block as pasted (``stereoset_eval.evaluate``, then ``run_study``), with the fixture
    model for bert-base-uncased, 20 items per file, and README's study as my_study.toml."""
    import stereoset_eval.curation.loaders.registry as registry

    code = _blocks(_readme(), "python")[0]
    assert "stereoset_eval.evaluate(" in code and "stereoset_eval.run_study(" in code
    code = code.replace('"bert-base-uncased"', repr(str(shared_dir / "fixtures" / "models" / "tiny-bert")))
    full = registry.load_items
    monkeypatch.setattr(registry, "load_items", lambda *a, **k: full(*a, **k)[:20])
    monkeypatch.delenv("STEREOSET_EVAL_DATA", raising=False)
    monkeypatch.setenv("STEREOSET_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _fixture_study(shared_dir, tmp_path)
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - our own README
    out = capsys.readouterr().out.splitlines()
    table = [line for line in out if line.startswith("| tiny-bert")]
    assert {"StereoSet intrasentence", "CrowS-Pairs"} <= {cell.strip() for line in table for cell in line.split("|")}
    rows = json.loads((tmp_path / "runs" / "evaluate" / "tiny-bert" / "results.json").read_text(encoding="utf-8"))
    crows = next(r for r in rows if r["benchmark"] == "CrowS-Pairs" and r["metric"] == "metric score")
    assert float(out[-2]) == crows["value"]  # result.value(...) is the number results.json holds
    assert "'computed'" in out[-1] and out[-1].endswith("report.html")
    assert (tmp_path / "runs" / "four-models" / "report.html").is_file()
