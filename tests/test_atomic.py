"""Atomic outputs: an interrupted write never leaves a half file where a good one was.

* The helpers (``stereoset_eval.foundation.atomic``): a writer failing midway (disk full) leaves the old file
  byte-identical and no temporary file behind; same for a directory; a process killed with
  SIGKILL while rewriting a file leaves the old or the new file, never a mix.
* The toolkit's writers (score files, reports, curated CSV, figures) go through the helpers:
  a failure injected midway keeps every old output intact.
* An audit of the source: every call that writes a file (``open(..., "w")``, ``write_text``,
  ``to_csv``, ``to_parquet``, ``savefig``, ``json.dump``, ``save_to_disk``, ``save_pretrained``
  …) writes to an in-memory buffer or to the temporary path of ``atomic_path`` /
  ``atomic_directory`` — a new straggler fails this test with its file and line.
* The SQLite cache (WAL): a reader in another process sees only whole committed batches while
  a writer commits.
"""

from __future__ import annotations

import ast
import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from stereoset_eval.foundation import atomic

REPO = Path(__file__).resolve().parent.parent
SOURCE_DIRS = ("stereoset_eval", "foundation", "curation", "scoring", "analysis", "study", "cli", "speed", "data")


def _disk_full_after_half(monkeypatch) -> None:
    """Make ``Path.write_bytes`` write half of its data, then fail like a full disk."""
    real = Path.write_bytes

    def half_then_enospc(self: Path, data: bytes) -> int:
        real(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_bytes", half_then_enospc)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp") or ".old-" in p.name)


def test_failing_writer_keeps_old_file_and_no_temp(tmp_path: Path, monkeypatch):
    dest = tmp_path / "report.json"
    atomic.atomic_write_json(dest, {"value": 1})
    before = dest.read_bytes()
    _disk_full_after_half(monkeypatch)
    with pytest.raises(OSError, match="No space left"):
        atomic.atomic_write_json(dest, {"value": 2, "big": "x" * 100_000})
    assert dest.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_failing_atomic_path_writer_keeps_old_file(tmp_path: Path):
    dest = tmp_path / "table.csv"
    dest.write_text("a,b\n1,2\n")
    with pytest.raises(RuntimeError):
        with atomic.atomic_path(dest) as tmp:
            tmp.write_text("a,b\n3,")
            raise RuntimeError("writer died midway")
    assert dest.read_text() == "a,b\n1,2\n" and _leftovers(tmp_path) == []


def test_failing_directory_build_keeps_old_directory(tmp_path: Path):
    dest = tmp_path / "curated"
    with atomic.atomic_directory(dest) as d:
        (d / "pairs.csv").write_text("old\n")
        (d / "README.md").write_text("old card\n")
    with pytest.raises(RuntimeError):
        with atomic.atomic_directory(dest) as d:
            (d / "pairs.csv").write_text("new\n")
            raise RuntimeError("crashed before the card was written")
    assert sorted(p.name for p in dest.iterdir()) == ["README.md", "pairs.csv"]
    assert (dest / "pairs.csv").read_text() == "old\n"
    assert _leftovers(tmp_path) == []


def test_outputs_get_normal_permissions(tmp_path: Path):
    """mkstemp makes 0600 files; outputs must be readable like any file the user writes."""
    mask = os.umask(0o022)
    try:
        f = atomic.atomic_write_text(tmp_path / "r.md", "x")
        with atomic.atomic_directory(tmp_path / "d") as d:
            (d / "a").write_text("1")
    finally:
        os.umask(mask)
    assert f.stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o755


_KILLED_WRITER = textwrap.dedent("""
    import sys
    from stereoset_eval.foundation.atomic import atomic_write_bytes
    dest, n = sys.argv[1], int(sys.argv[2])
    i = 0
    while True:
        i += 1
        atomic_write_bytes(dest, bytes([65 + i % 26]) * n)
""")


def test_sigkill_during_rewrites_leaves_a_whole_file(tmp_path: Path):
    dest, size = tmp_path / "big.bin", 8 << 20
    dest.write_bytes(b"A" * size)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(dest), str(size)], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while dest.read_bytes()[:1] == b"A" and time.monotonic() < deadline:  # wait for the first rename
            time.sleep(0.05)
        for _ in range(5):
            time.sleep(0.05)
            data = dest.read_bytes()  # concurrent reader: always a whole file
            assert len(data) == size and data == data[:1] * size
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    data = dest.read_bytes()
    assert len(data) == size and data == data[:1] * size, "a killed writer left a half file"


# ---------------------------------------------------------------- the toolkit's writers


def _score_set():
    from stereoset_eval.scoring.records import ScoreSet, SentenceScore

    recs = [SentenceScore("crows:0", f"crows:0:{r}", f"sent_{r}", -10.5 - i, 4, (1, 2, 3, 4), (-1.0, -2.0, -3.0, -4.5))
            for i, r in enumerate(("more", "less"))]
    return ScoreSet("crows-nangia", recs, {"model": {"id": "m"}}, {"hits": 0, "computed": 2})


def test_score_outputs_survive_a_failed_rewrite(tmp_path: Path, monkeypatch):
    from stereoset_eval.scoring.export import write_outputs

    write_outputs(tmp_path, [_score_set()], {"notes": ["run 1"]})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    _disk_full_after_half(monkeypatch)
    with pytest.raises(OSError):
        write_outputs(tmp_path, [_score_set()], {"notes": ["run 2"]})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert _leftovers(tmp_path) == []


def test_report_files_survive_a_failed_rewrite(tmp_path: Path, monkeypatch):
    from stereoset_eval.analysis import report_writer

    for render in ("report_to_json", "render_markdown", "render_html"):
        monkeypatch.setattr(report_writer, render, lambda report: "new line\n" * 10_000)
    files = [tmp_path / name for name in report_writer.FILES.values()]
    for f in files:
        f.write_text("old report\n")
    _disk_full_after_half(monkeypatch)
    with pytest.raises(OSError):
        report_writer.write_report(object(), tmp_path)
    assert [f.read_text() for f in files] == ["old report\n"] * 3
    assert _leftovers(tmp_path) == []


def test_curated_csv_survives_a_failed_pandas_write(tmp_path: Path, monkeypatch):
    import pandas as pd

    from stereoset_eval.curation.export import write_csv

    dest = tmp_path / "pairs.csv"
    write_csv(pd.DataFrame({"a": [1, 2]}), dest)
    before = dest.read_bytes()
    real = pd.DataFrame.to_csv

    def half(self, path, **kw):
        real(self.iloc[:1], path, **kw)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", half)
    with pytest.raises(OSError):
        write_csv(pd.DataFrame({"a": list(range(1000))}), dest)
    assert dest.read_bytes() == before and _leftovers(tmp_path) == []


# ---------------------------------------------------------------- audit of the source

WRITER_METHODS = {"write_text", "write_bytes", "to_csv", "to_parquet", "to_json", "to_excel", "to_html",
                  "savefig", "save_to_disk", "save_pretrained", "to_feather", "to_pickle"}
WRITER_FUNCTIONS = {("json", "dump"), ("pickle", "dump"), ("np", "save"), ("numpy", "save"), ("torch", "save"),
                    ("shutil", "copy"), ("shutil", "copyfile"), ("shutil", "copy2")}
WRITE_MODES = ("w", "a", "x", "+")
MODULES_WITH_OPEN = ("io", "os", "gzip", "bz2", "lzma", "codecs", "tarfile", "zipfile", "builtins")
ALLOWED_FILES = {"foundation/atomic.py"}  # the helpers themselves
# os.fdopen is not audited: it wraps a descriptor that exists already (a pipe, or mkstemp's file
# in atomic_download, which renames it into place)


class _Audit(ast.NodeVisitor):
    """Finds file writes whose target is neither a buffer nor an atomic temporary path."""

    def __init__(self, rel: str) -> None:
        self.rel, self.safe, self.problems = rel, [set()], []

    def visit_FunctionDef(self, node) -> None:  # buffers are per function
        self.safe.append(set(self.safe[-1]))
        self.generic_visit(node)
        self.safe.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_With(self, node) -> None:
        for item in node.items:
            call = item.context_expr
            name = getattr(getattr(call, "func", None), "id", None) or getattr(getattr(call, "func", None), "attr", None)
            # a handle of open() is fine to dump into: the open() call itself is audited
            if name in ("atomic_path", "atomic_directory", "open", "fdopen") and isinstance(item.optional_vars, ast.Name):
                self.safe[-1].add(item.optional_vars.id)
        self.generic_visit(node)

    def visit_Assign(self, node) -> None:
        value = node.value
        if isinstance(value, ast.Call) and getattr(value.func, "attr", None) in ("BytesIO", "StringIO"):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    self.safe[-1].add(t.id)
        self.generic_visit(node)

    def _is_safe(self, expr) -> bool:
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        return bool(names & self.safe[-1])

    def visit_Call(self, node) -> None:
        func = node.func
        target = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in (
            "path", "path_or_buf", "fname", "file", "save_directory", "dataset_path", "excel_writer", "buf")), None)
        if isinstance(func, ast.Attribute) and func.attr in WRITER_METHODS:
            receiver_is_path = func.attr in ("write_text", "write_bytes")
            checked = func.value if receiver_is_path else target
            if checked is not None and not self._is_safe(checked):  # None: returns a string (to_csv())
                self.problems.append(f"{self.rel}:{node.lineno}: .{func.attr}() writes outside atomic_path")
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and (func.value.id, func.attr) in WRITER_FUNCTIONS:
            dest = node.args[1] if len(node.args) > 1 and func.attr in ("dump", "copy", "copyfile", "copy2") else target
            if dest is not None and not self._is_safe(dest):
                self.problems.append(f"{self.rel}:{node.lineno}: {func.value.id}.{func.attr}() writes outside atomic_path")
        elif (isinstance(func, ast.Name) and func.id == "open") or (isinstance(func, ast.Attribute) and func.attr == "open"):
            # open(file, mode), io/gzip/os.fdopen(file, mode) … but path.open(mode): the receiver is the file
            path_method = isinstance(func, ast.Attribute) and func.attr == "open" and not (
                isinstance(func.value, ast.Name) and func.value.id in MODULES_WITH_OPEN)
            mode_at, target = (0, func.value) if path_method else (1, target)
            mode = node.args[mode_at] if len(node.args) > mode_at else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            writes = isinstance(mode, ast.Constant) and isinstance(mode.value, str) and any(m in mode.value for m in WRITE_MODES)
            if writes and not (target is not None and self._is_safe(target)):
                self.problems.append(f"{self.rel}:{node.lineno}: open(..., {mode.value!r}) outside atomic_path")
        self.generic_visit(node)


def audit(root: Path = REPO) -> list[str]:
    problems = []
    for folder in SOURCE_DIRS:
        for path in sorted((root / folder).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in ALLOWED_FILES:
                continue
            visitor = _Audit(rel)
            visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=rel))
            problems += visitor.problems
    return problems


def test_audit_finds_a_straggler(tmp_path: Path):
    (tmp_path / "curation").mkdir()
    (tmp_path / "curation" / "bad.py").write_text(textwrap.dedent("""
        import io, json
        from stereoset_eval.foundation.atomic import atomic_path
        def good(df, dest, fig, obj):
            buf = io.BytesIO()
            fig.savefig(buf)
            with atomic_path(dest) as tmp:
                df.to_csv(tmp)
                with open(tmp, "w") as fh:
                    json.dump(obj, fh)
            return df.to_csv(index=False)
        def bad(df, dest, fig, obj):
            df.to_csv(dest)
            fig.savefig(dest)
            dest.write_text("x")
            with open(dest, "w") as fh:
                json.dump(obj, fh)
            with dest.open("a", encoding="utf-8") as fh:
                fh.write("x")
            with dest.open() as fh:
                return fh.read()
    """))
    found = audit(tmp_path)
    assert [p.split(":")[1] for p in found] == ["13", "14", "15", "16", "18"], found


def test_every_file_write_goes_through_the_atomic_helpers():
    problems = audit()
    assert not problems, "non-atomic file writes:\n" + "\n".join(problems)


# ---------------------------------------------------------------- SQLite cache readers


_CACHE_WRITER = textwrap.dedent("""
    import sys
    from stereoset_eval.scoring.cache import ScoreCache
    cache = ScoreCache(sys.argv[1])
    for batch in range(int(sys.argv[2])):
        # one batch = 50 units whose values all carry the batch number
        cache.put_many({f"k{batch}-{i}": {"batch": batch, "i": i} for i in range(50)}, model="m", method="x")
    cache.close()
""")


def test_cache_reader_sees_only_whole_batches_while_a_writer_commits(tmp_path: Path):
    from stereoset_eval.scoring.cache import ScoreCache

    n_batches = 200
    ScoreCache(tmp_path).close()  # create the database (WAL) first
    proc = subprocess.Popen([sys.executable, "-c", _CACHE_WRITER, str(tmp_path), str(n_batches)], cwd=REPO)
    seen_counts = set()
    reader = ScoreCache(tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            rows = reader._db.execute("SELECT value FROM results").fetchall()  # one snapshot
            values = [json.loads(v) for (v,) in rows]
            per_batch: dict[int, int] = {}
            for v in values:
                per_batch[v["batch"]] = per_batch.get(v["batch"], 0) + 1
            assert all(n == 50 for n in per_batch.values()), f"a reader saw a partial batch: {per_batch}"
            assert sorted(per_batch) == list(range(len(per_batch))), "batches must appear in commit order"
            seen_counts.add(len(per_batch))
            if proc.poll() is not None and len(per_batch) == n_batches:
                break
        assert proc.wait(timeout=60) == 0
    finally:
        reader.close()
        if proc.poll() is None:
            proc.kill()
    assert max(seen_counts) == n_batches
    assert len(seen_counts) > 2, "the reader never overlapped the writer"
