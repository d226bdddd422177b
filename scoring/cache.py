"""The result cache: SQLite in WAL mode, one transaction per computed batch.

One row per *unit* (a sentence, or a CrowS pair): key = sha256 of the model identity
(id, revision, weights and tokenizer sha256, class, dtype), the method and its version, every
option that changes a number, and the texts the method reads. The value is the unit's
per-sentence results as JSON (floats round-trip exactly). A run commits each batch's results
as it finishes, so a killed run loses at most the batch in flight; a rerun reads the rest.

Default location: ``$STEREOSET_EVAL_CACHE`` or ``~/.cache/stereoset-eval/scores``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from stereoset_eval.foundation.errors import StereosetEvalError

SCHEMA = 1
FILENAME = "scores.sqlite3"
_CHUNK = 500  # keys per SELECT (SQLite's variable limit)


def default_cache_dir() -> Path:
    env = os.environ.get("STEREOSET_EVAL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "stereoset-eval" / "scores"


def cache_key(model_identity: Mapping[str, Any], method: str, method_version: int,
              options: Mapping[str, Any], inputs: Mapping[str, Any]) -> str:
    """sha256 over everything that determines a unit's numbers (canonical JSON)."""
    payload = {
        "schema": SCHEMA,
        "model": dict(model_identity),
        "method": method,
        "method_version": method_version,
        "options": dict(options),
        "inputs": dict(inputs),
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_keys(model_identity: Mapping[str, Any], method: str, method_version: int,
               options: Mapping[str, Any], inputs: Iterable[Mapping[str, Any]]) -> list[str]:
    """:func:`cache_key` of each unit's ``inputs``, with the part every unit shares written once.

    In canonical JSON (sorted keys) ``inputs`` is the payload's first key, so a key's text is
    ``{"inputs":`` + the inputs' JSON + the same tail for every unit: the same text, and the same
    sha256, as :func:`cache_key` (``tests/test_scoring_cache.py`` checks it), without rewriting
    the model identity and options for each of a dataset's thousands of units.
    """
    rest = {"schema": SCHEMA, "model": dict(model_identity), "method": method, "method_version": method_version,
            "options": dict(options)}
    assert min(rest) > "inputs"  # "inputs" sorts first: the texts below are cache_key's
    tail = "," + json.dumps(rest, sort_keys=True, ensure_ascii=False, separators=(",", ":"))[1:]
    encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode
    return [hashlib.sha256(('{"inputs":' + encode(dict(unit)) + tail).encode("utf-8")).hexdigest() for unit in inputs]


@contextlib.contextmanager
def _setup_lock(db_path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``<db>.lock`` while a connection sets the database up."""
    fd = os.open(db_path.with_name(db_path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)  # a lock, not data
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class CacheError(StereosetEvalError):
    """The cache file cannot be used (corrupt, truncated, not a database, unwritable)."""


_T = TypeVar("_T")


def _guarded(method: Callable[..., _T]) -> Callable[..., _T]:
    """Turn a SQLite failure inside ``method`` into a :class:`CacheError` naming the file."""
    import functools

    @functools.wraps(method)
    def wrapper(self: "ScoreCache", *args: Any, **kwargs: Any) -> _T:
        problem = None
        try:
            return method(self, *args, **kwargs)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                problem = f"is locked by another process for too long ({exc}); retry, or pass --cache-dir"
            elif "full" in str(exc):
                problem = f"cannot be written: the disk is full ({exc}); free some space or pass --cache-dir"
            elif "readonly" in str(exc) or "unable to open" in str(exc):
                problem = f"cannot be written ({exc}): pass --cache-dir to use a writable folder, or --no-cache"
            else:
                problem = f"is corrupt ({exc}): delete it or pass --cache-dir"
        except sqlite3.DatabaseError as exc:  # "file is not a database", "disk image is malformed"
            problem = f"is corrupt ({exc}): delete it or pass --cache-dir"
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            problem = f"is corrupt (an entry is not valid JSON: {exc}): delete it or pass --cache-dir"
        raise CacheError(f"the score cache {self.path} {problem}")

    return wrapper


class ScoreCache:
    """A persistent key -> JSON store for unit results (and a memo of file hashes)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        if self.directory.exists() and not self.directory.is_dir():
            raise CacheError(f"the score cache folder {self.directory} is a file, not a folder: pass --cache-dir "
                             "a folder (or --no-cache)")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / FILENAME
        self._open()

    @_guarded
    def _open(self) -> None:
        self._db = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        # Switching to WAL on a fresh file is refused at once ("database is locked", no busy wait)
        # while another process does the same; one process at a time sets the file up.
        with _setup_lock(self.path):
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, model TEXT, method TEXT,"
                " value TEXT NOT NULL, created REAL NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS file_hashes (path TEXT, size INTEGER, mtime_ns INTEGER,"
                " sha256 TEXT NOT NULL, PRIMARY KEY (path, size, mtime_ns))"
            )
        self._db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process keeps every commit

    @_guarded
    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The cached values of those ``keys`` that are present."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Any] = {}
        for i in range(0, len(keys), _CHUNK):
            chunk = keys[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for key, value in self._db.execute(f"SELECT key, value FROM results WHERE key IN ({marks})", chunk):
                found[key] = json.loads(value)
        return found

    @_guarded
    def put_many(self, entries: Mapping[str, Any], *, model: str, method: str) -> None:
        """Store ``entries`` (key -> JSON-able value) in one transaction."""
        now = time.time()
        rows = [(k, model, method, json.dumps(v, ensure_ascii=False), now) for k, v in entries.items()]
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?)", rows)

    @_guarded
    def rows(self, *, model: str | None = None, method: str | None = None) -> list[tuple[str, str, str, Any]]:
        """``(key, model, method, value)`` of every stored result, optionally of one model and/or method.

        What a study's driver sends a worker node (its results for that model and method) and what
        a worker sends back; keys are content hashes, so an extra row is never a wrong hit.
        """
        where, args = [], []
        for column, value in (("model", model), ("method", method)):
            if value is not None:
                where.append(f"{column}=?")
                args.append(value)
        sql = "SELECT key, model, method, value FROM results" + (" WHERE " + " AND ".join(where) if where else "")
        return [(k, m, me, json.loads(v)) for k, m, me, v in self._db.execute(sql + " ORDER BY key", args)]

    @_guarded
    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    @_guarded
    def get_file_hash(self, path: str, size: int, mtime_ns: int) -> str | None:
        row = self._db.execute(
            "SELECT sha256 FROM file_hashes WHERE path=? AND size=? AND mtime_ns=?", (path, size, mtime_ns)
        ).fetchone()
        return row[0] if row else None

    @_guarded
    def put_file_hash(self, path: str, size: int, mtime_ns: int, sha256: str) -> None:
        with self._transaction():
            self._db.execute("INSERT OR REPLACE INTO file_hashes VALUES (?, ?, ?, ?)", (path, size, mtime_ns, sha256))

    def _transaction(self) -> "_Tx":
        return _Tx(self._db)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "ScoreCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Tx:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if exc_type else "COMMIT")
