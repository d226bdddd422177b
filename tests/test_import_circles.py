"""No import circles inside the scoring and study layers, lazy (in-function) imports included.

The map is read from the source with ``ast`` (every ``import`` / ``from … import`` anywhere in
a module, so an import deferred into a function to dodge a circle still counts as an edge).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS = {"scoring": "stereoset_eval.scoring", "study": "stereoset_eval.study"}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in LAYERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([package, *parts])] = path
    return out


def _imports(path: Path, known: set[str]) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found |= {n for n in names if n in known}
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    # a package's __init__ re-exporting its modules is not a circle of the modules themselves
    return {m: _imports(p, known) - {m} for m, p in mods.items() if not p.name == "__init__.py"}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_finder_sees_a_circle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_scoring_and_study_have_no_import_circle():
    graph = import_graph()
    assert "stereoset_eval.scoring.model_checks" in graph and "stereoset_eval.study.config_parse" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])
