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


def test_ls_prints_real_descriptions(capsys):
    from stereoset_eval.cli.main import main

    assert main(["ls"]) == 0
    out = capsys.readouterr().out
    assert "str(object=" not in out
    assert "StereoSet (Nadeem et al. 2021)" in out and "[bundled]" in out


def test_fetch_data_no_download_reports_every_missing_file(tmp_path, capsys):
    from stereoset_eval.cli.main import main

    rc = main(["fetch-data", "--no-download", "--data-dir", str(tmp_path)])
    cap = capsys.readouterr()
    assert rc == 2
    missing = [line.split()[1] for line in cap.out.splitlines() if line.startswith("missing")]
    assert missing == ["bmne-crowspairs", "bmne-stereoset", "stereoset-dev", "stereoset-dev-ids-csv",
                       "stereoset-dev-jsonl", "stereoset-test"]
    assert cap.out.count("(bundled in the package)") == 3
    assert cap.err.startswith("error: 6 of 9 data files missing")
