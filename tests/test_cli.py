"""The command line: every subcommand has --help; inventory and ls print what they should."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stereoset_eval.cli.main import build_parser, main


def subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted(action.choices)


def test_core_subcommands_exist():
    assert {"inventory", "ls", "fetch-data", "demo"} <= set(subcommands())


@pytest.mark.parametrize("command", subcommands())
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    assert "usage: stereoset-eval" in capsys.readouterr().out


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "stereoset_eval.cli.main", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("stereoset-eval ")


def test_inventory_stereoset(ids_csv, capsys):
    assert main(["inventory", "--benchmark", "stereoset", "--data", str(ids_csv)]) == 0
    out = capsys.readouterr().out
    assert "4229 items" in out
    assert "stereoset-intra" in out and "blank_glued" in out


def test_inventory_crows_via_data_dir(data_dir, capsys):
    assert main(["inventory", "--benchmark", "crows-pairs", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "1508 items" in out and "known_erratum" in out


def test_bad_file_is_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["inventory", "--benchmark", "stereoset", "--data", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(bad) in err and "Traceback" not in err


def test_ls_lists_sources(capsys):
    assert main(["ls"]) == 0
    out = capsys.readouterr().out
    assert "stereoset-intra" in out and "crows-pairs-revised" in out and "stereoset-dev" in out
