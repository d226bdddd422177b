"""The layer check: every import of the ``stereoset_eval`` namespace, read with ``ast``, against the floors.

    foundation < curation < scoring | analysis < study < cli

A module may import its own layer and the layers below it, never one above (upward) nor a
sibling on the same floor (sideways: scoring and analysis know nothing of each other). Every
``import`` counts wherever it stands: at module level, inside a function (a lazy import) or
under ``if TYPE_CHECKING:``. The namespace is mapped onto folders by ``pyproject.toml``'s
``[tool.setuptools.package-dir]`` (``stereoset_eval.foundation = foundation/`` …), which import-map
tools do not follow. The package root (``stereoset_eval/``: the lazy library API and
``__main__``) sits above the command line; any module may read ``stereoset_eval.__version__``.
``stereoset_eval.data`` holds packaged files and may be read from any floor.

Run ``python tools/layers.py`` for the list of violations and circles (exit 1 when there are any);
``tests/test_layers.py`` runs the same check.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = "stereoset_eval"
#: layer -> floor; equal floors are siblings
FLOORS: dict[str, int] = {"foundation": 0, "data": 0, "curation": 1, "scoring": 2, "analysis": 2, "study": 3,
                          "cli": 4, ROOT: 5}
#: layers any floor may import (packaged files)
SHARED: frozenset[str] = frozenset({"data"})


@dataclass(frozen=True)
class Import:
    """One import statement's target inside the namespace."""

    module: str  # importing module
    path: Path
    line: int
    target: str  # the module (or package) imported
    lazy: bool  # inside a function or under TYPE_CHECKING


@dataclass(frozen=True)
class Violation:
    imp: Import
    kind: str  # "upward" or "sideways"

    def __str__(self) -> str:
        i = self.imp
        how = "lazy " if i.lazy else ""
        return (f"{i.path}:{i.line}: {self.kind} {how}import: {i.module} ({layer_of(i.module)}) imports "
                f"{i.target} ({layer_of(i.target)})")


def package_dirs(repo: Path) -> dict[str, Path]:
    """``[tool.setuptools.package-dir]`` of ``repo/pyproject.toml``: package -> folder."""
    config = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {pkg: repo / folder for pkg, folder in mapping.items()}


def modules(repo: Path) -> dict[str, Path]:
    """Every module of the namespace (``a.b`` for ``a/b.py``, ``a`` for ``a/__init__.py``) -> its file."""
    out: dict[str, Path] = {}
    dirs = package_dirs(repo)
    for pkg, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            if any(p.startswith(".") for p in rel.parts):
                continue
            out[".".join([pkg, *(p for p in rel.parts if p != "__init__")])] = path
    return out


def layer_of(module: str) -> str:
    """``stereoset_eval.analysis.results`` -> ``analysis``; the root package -> ``stereoset_eval``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in FLOORS else ROOT


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rsplit(".", 1)[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(module: str, path: Path, known: set[str]) -> list[Import]:
    """The namespace imports of one module, each resolved to the module (or package) it loads."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            deeper = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit_stmt(stmt, True)
                for stmt in child.orelse:
                    visit_stmt(stmt, lazy)
                continue
            visit_stmt(child, deeper, recurse=False)
            visit(child, deeper)

    def visit_stmt(stmt: ast.AST, lazy: bool, recurse: bool = True) -> None:
        targets: list[str] = []
        if isinstance(stmt, ast.Import):
            targets = [a.name for a in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            base = stmt.module or ""
            if stmt.level:
                pkg = _package_of(module, path).split(".")
                pkg = pkg[: len(pkg) - (stmt.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            if base == ROOT and all(a.name == "__version__" for a in stmt.names):
                targets = []  # the version is readable from every floor
            else:
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in stmt.names]
        for t in dict.fromkeys(targets):
            if t == ROOT or t.startswith(ROOT + "."):
                resolved = resolve(t)
                if resolved is not None:
                    found.append(Import(module, path, getattr(stmt, "lineno", 0), resolved, lazy))
        if recurse:
            visit(stmt, lazy)

    visit(tree, False)
    return found


def all_imports(repo: Path) -> list[Import]:
    mods = modules(repo)
    known = set(mods)
    return [i for m, p in mods.items() for i in imports(m, p, known)]


def violations(found: list[Import]) -> list[Violation]:
    """Imports that go up a floor, or sideways to a sibling layer on the same floor."""
    out = []
    for i in found:
        a, b = layer_of(i.module), layer_of(i.target)
        if a == b or b in SHARED:
            continue
        if FLOORS[b] > FLOORS[a]:
            out.append(Violation(i, "upward"))
        elif FLOORS[b] == FLOORS[a]:
            out.append(Violation(i, "sideways"))
    return out


def graph(found: list[Import], repo_modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the modules it imports. A package's ``__init__`` re-exporting its modules is not a
    circle of the modules themselves, so ``__init__`` files are left out as importers."""
    g: dict[str, set[str]] = {m: set() for m, p in repo_modules.items() if p.name != "__init__.py"}
    for i in found:
        if i.module in g and i.target != i.module:
            g[i.module].add(i.target)
    return g


def cycle(g: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, a]``), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g.get(node, ())):
            if nxt not in g:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(g):
        if node not in state and (found := visit(node)):
            return found
    return None


def check(repo: Path) -> tuple[list[Violation], list[str] | None]:
    """(violations, one circle or None) of the repository at ``repo``."""
    mods = modules(repo)
    found = all_imports(repo)
    return violations(found), cycle(graph(found, mods))


def main(argv: list[str] | None = None) -> int:
    repo = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent
    bad, circle = check(repo)
    for v in bad:
        print(v)
    if circle:
        print("import circle: " + " -> ".join(circle))
    n = len(all_imports(repo))
    print(f"{n} namespace imports read; {len(bad)} violation(s); {'a circle' if circle else 'no circle'}")
    return 1 if bad or circle else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
