"""The CLI's error boundary: any fault from below is one ``error:`` line, exit 2; ``--debug`` adds the traceback."""

from __future__ import annotations

import errno
import sqlite3

import pytest

from stereoset_eval.cli import main as cli_main

FAULTS = [
    (OSError(errno.ENOSPC, "No space left on device", "/data/out/report.json"), r"/data/out/report.json: no space left"),
    (OSError(errno.EROFS, "Read-only file system", "/ro/out"), r"/ro/out: the file system is read-only"),
    (IsADirectoryError(errno.EISDIR, "Is a directory", "/d"), r"/d: is a directory"),
    (OSError(errno.ELOOP, "Too many levels of symbolic links", "/l"), r"/l: too many levels of symbolic links"),
    (PermissionError(errno.EACCES, "Permission denied", "/p"), r"/p: permission denied"),
    (BrokenPipeError(errno.EPIPE, "Broken pipe"), r"the output pipe was closed"),
    (sqlite3.DatabaseError("database disk image is malformed"), r"score cache .*corrupt.*--cache-dir"),
    (MemoryError(), r"out of memory"),
    (RuntimeError("something odd"), r"unexpected RuntimeError: something odd .*--debug"),
]


def _failing(monkeypatch, exc: BaseException) -> None:
    parser = cli_main.build_parser()

    def build() -> object:
        def fail(args: object) -> int:
            raise exc

        parser._subparsers._group_actions[0].choices["ls"].set_defaults(func=fail)  # noqa: SLF001
        return parser

    monkeypatch.setattr(cli_main, "build_parser", build)


@pytest.mark.parametrize("exc, says", FAULTS, ids=[type(e).__name__ + str(getattr(e, "errno", "")) for e, _ in FAULTS])
def test_fault_is_one_line(monkeypatch, capsys, exc, says) -> None:
    import re

    _failing(monkeypatch, exc)
    assert cli_main.main(["ls"]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and re.search(says, lines[0]), lines


def test_debug_shows_the_traceback(monkeypatch, capsys) -> None:
    _failing(monkeypatch, RuntimeError("boom"))
    assert cli_main.main(["ls", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("error: unexpected RuntimeError: boom")


def test_secrets_in_a_fault_are_scrubbed(monkeypatch, capsys) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "ls-SECRET-0123456789")
    _failing(monkeypatch, RuntimeError("GET http://bob:pw123456@host/x with key ls-SECRET-0123456789"))
    assert cli_main.main(["ls"]) == 2
    err = capsys.readouterr().err
    assert "ls-SECRET" not in err and "pw123456" not in err and "http://***@host/x" in err


def test_cache_disk_full_is_not_called_corrupt(tmp_path, monkeypatch) -> None:
    from stereoset_eval.scoring.cache import CacheError, ScoreCache

    cache = ScoreCache(tmp_path)

    class FullDisk:
        def execute(self, *args: object) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        executemany = execute

    real, cache._db = cache._db, FullDisk()  # noqa: SLF001
    with pytest.raises(CacheError, match=r"scores.sqlite3 cannot be written: the disk is full"):
        cache.put_many({"k": 1}, model="m", method="x")
    cache._db = real  # noqa: SLF001
    cache.close()
