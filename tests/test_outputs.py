"""``foundation.outputs.output_folder``: a run's files replace the old ones as one set, only in our own folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stereoset_eval.foundation import atomic, outputs
from stereoset_eval.foundation.outputs import MARKER, OutputFolderError, output_folder


def _write_set(dest: Path, tag: str, names=("a.txt", "b.txt"), command: str = "report") -> None:
    with output_folder(dest, command=command) as tmp:
        for n in names:
            (tmp / n).write_text(tag)


def test_set_replaced_whole_and_marker_lists_it(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    _write_set(dest, "old", names=("a.txt", "stale.txt"))
    _write_set(dest, "new")
    assert sorted(p.name for p in dest.iterdir()) == [MARKER, "a.txt", "b.txt"]  # stale.txt is gone
    assert (dest / "a.txt").read_text() == "new"
    assert json.loads((dest / MARKER).read_text()) == {"command": "report", "files": ["a.txt", "b.txt"],
                                                        "tool": "stereoset-eval"}
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


@pytest.mark.parametrize("exchange_works", [True, False])
def test_failure_midway_keeps_the_old_set(tmp_path: Path, monkeypatch, exchange_works: bool) -> None:
    if not exchange_works:  # a file system without renameat2: the two-rename fallback
        monkeypatch.setattr(outputs, "exchange", lambda a, b: False)
    dest = tmp_path / "out"
    _write_set(dest, "old")
    with pytest.raises(RuntimeError):
        with output_folder(dest, command="report") as tmp:
            (tmp / "a.txt").write_text("new")
            raise RuntimeError("killed midway")
    assert (dest / "a.txt").read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out"]
    _write_set(dest, "newer")
    assert (dest / "b.txt").read_text() == "newer" and [p.name for p in tmp_path.iterdir()] == ["out"]


def test_foreign_folder_other_command_and_file_are_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("years of work")
    with pytest.raises(OutputFolderError, match="not an output of `stereoset-eval report`"):
        _write_set(tmp_path / "mine", "x")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["thesis.tex"]
    _write_set(tmp_path / "scored", "x", command="score")
    with pytest.raises(OutputFolderError, match="holds the output of `stereoset-eval score`"):
        _write_set(tmp_path / "scored", "y")
    (tmp_path / "f.txt").write_text("keep")
    with pytest.raises(OutputFolderError, match="is a file"):
        _write_set(tmp_path / "f.txt", "y")
    with pytest.raises(OutputFolderError, match="is empty"):
        _write_set("", "y")  # type: ignore[arg-type] - a str, as the config hands it over
    assert (tmp_path / "f.txt").read_text() == "keep"


def test_working_directory_is_refused(tmp_path: Path, monkeypatch) -> None:
    _write_set(tmp_path / "out", "x")
    monkeypatch.chdir(tmp_path / "out")
    with pytest.raises(OutputFolderError, match="working directory"):
        _write_set(Path("."), "y")


def test_a_killed_runs_temporary_folder_is_removed_by_the_next_run(tmp_path: Path) -> None:
    dead = tmp_path / ".out.abc123.tmp"
    dead.mkdir()
    (dead / ".stereoset-eval-building").write_text("999999999")  # no such pid
    foreign = tmp_path / ".out.user.tmp"
    foreign.mkdir()  # not ours (no owner file): left alone
    _write_set(tmp_path / "out", "x")
    assert not dead.exists() and foreign.exists()


def test_exchange_swaps_two_folders(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    if not atomic.exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) on this file system")
    assert (tmp_path / "b" / "x").read_text() == "a" and not list((tmp_path / "a").iterdir())
    assert os.path.isdir(tmp_path / "a")


def test_identity_is_recorded_and_a_different_run_refused_unless_overwrite(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    with output_folder(dest, command="study", identity={"limit": 2, "models": ("a",)}) as tmp:
        (tmp / "a.txt").write_text("first")
    assert json.loads((dest / MARKER).read_text())["identity"] == {"limit": 2, "models": ["a"]}
    with output_folder(dest, command="study", identity={"models": ["a"], "limit": 2}) as tmp:  # the same run
        (tmp / "a.txt").write_text("again")
    with pytest.raises(OutputFolderError, match=r"holds a different `study` run \(differs in limit\)"):
        outputs.check_replaceable(dest, command="study", identity={"limit": 3, "models": ["a"]})
    assert (dest / "a.txt").read_text() == "again"
    with output_folder(dest, command="study", identity={"limit": 3, "models": ["a"]}, overwrite=True) as tmp:
        (tmp / "a.txt").write_text("third")
    assert json.loads((dest / MARKER).read_text())["identity"]["limit"] == 3
    with pytest.raises(OutputFolderError, match="holds the output of `stereoset-eval study`"):
        outputs.check_replaceable(dest, command="score", identity={}, overwrite=True)  # never another command's


def test_a_marker_without_identity_is_refused_when_the_run_has_one(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    _write_set(dest, "old", command="study")  # no identity: as an older version wrote it
    with pytest.raises(OutputFolderError, match="records no run identity"):
        outputs.check_replaceable(dest, command="study", identity={"limit": None})
    assert outputs.check_replaceable(dest, command="study") == dest  # a caller without identity may replace it
