"""The chat judge's reply cache: one SQLite file, replies keyed by (judge name, request sha256).

A second curation run over the same items makes no request: a reply at temperature 0 is
stored once and read back (a malformed reply too: the model said what it said). Every write is
its own transaction, so an interrupted run leaves the replies written so far and nothing half.
Only replies are stored, scrubbed of the API key; errors are not (the next run asks again).
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from stereoset_eval.foundation.errors import StereosetEvalError

FILENAME = "chat_judge.sqlite3"
_SCHEMA = ("CREATE TABLE IF NOT EXISTS replies (model TEXT NOT NULL, request_sha256 TEXT NOT NULL, "
           "reply TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (model, request_sha256))")


class JudgeCacheError(StereosetEvalError):
    """The judge's reply cache cannot be opened or written."""


def default_judge_cache_dir() -> Path:
    """``$STEREOSET_EVAL_CACHE/judge``, else ``~/.cache/stereoset-eval/judge``."""
    env = os.environ.get("STEREOSET_EVAL_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "stereoset-eval") / "judge"


class ReplyCache:
    """Replies by (model, request sha256) in ``folder/chat_judge.sqlite3``."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.path = Path(folder) / FILENAME
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0)
            with self._db:
                self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise JudgeCacheError(f"{self.path}: the judge's reply cache cannot be used ({exc}); delete it or "
                                  "pass --judge-cache-dir to use another folder") from None

    def get(self, model: str, request_sha256: str) -> str | None:
        try:
            row = self._db.execute("SELECT reply FROM replies WHERE model = ? AND request_sha256 = ?",
                                   (model, request_sha256)).fetchone()
        except sqlite3.Error as exc:
            raise JudgeCacheError(f"{self.path}: the judge's reply cache cannot be read ({exc}); delete it or "
                                  "pass --judge-cache-dir to use another folder") from None
        return None if row is None else str(row[0])

    def put(self, model: str, request_sha256: str, reply: str) -> None:
        try:
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
                                 (model, request_sha256, reply, time.time()))
        except sqlite3.Error as exc:
            raise JudgeCacheError(f"{self.path}: the judge's reply cache cannot be written ({exc}); check the "
                                  "disk, or pass --judge-cache-dir to use another folder") from None

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        self._db.close()
