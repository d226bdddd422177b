"""No benchmark-name string table outside the benchmark modules (issue 32): ``cli/`` and ``study/`` ask the
registry (:mod:`stereoset_eval.analysis.benchmarks`) instead of listing or comparing benchmark names.

A *table* here is a benchmark or study-source name as a string literal inside a tuple, list, set or
dict, or compared with ``==`` / ``in``; a name passed to a call (``get_benchmark("stereoset")``) is a
lookup and allowed. The scan reads the code with ``ast``, so docstrings and help texts never count.
"""

from __future__ import annotations

import ast
from pathlib import Path

from stereoset_eval.analysis.benchmarks import BENCHMARKS, SOURCES

REPO = Path(__file__).resolve().parent.parent
SCANNED = ("cli", "study")
#: files not yet held to the rule (none: curate reads the registry's curatable benchmarks since rules 3.0)
NOT_YET: set[str] = set()


def _names() -> set[str]:
    return set(BENCHMARKS) | set(SOURCES)


def tables_in(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every benchmark name used as a table entry or compared in ``source``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            members = list(node.elts)
        elif isinstance(node, ast.Dict):
            members = [k for k in node.keys if k is not None] + list(node.values)
        elif isinstance(node, ast.Compare):
            members = [node.left, *node.comparators]
        else:
            continue
        found += [(m.lineno, m.value) for m in members
                  if isinstance(m, ast.Constant) and isinstance(m.value, str) and m.value in names]
    return sorted(set(found))


def test_cli_and_study_hold_no_benchmark_name_table():
    names = _names()
    offenders = []
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in NOT_YET:
                continue
            offenders += [f"{rel}:{line}: {name!r}" for line, name in tables_in(path.read_text(encoding="utf-8"), names)]
    assert not offenders, "benchmark names listed outside the benchmark modules (ask the registry):\n" + "\n".join(offenders)


def test_the_scan_finds_a_planted_table():
    names = _names()
    planted = ('BENCHES = ("stereoset", "crows-pairs")\nif bench == "stereoset":\n    pass\n'
               'x = {"pairs": 1}\nget_benchmark("stereoset")\n"""stereoset in a docstring"""\n')
    assert tables_in(planted, names) == [(1, "crows-pairs"), (1, "stereoset"), (2, "stereoset"), (4, "pairs")]
