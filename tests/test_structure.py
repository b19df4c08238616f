"""The structure on docs/architecture.md holds: import layers, no import cycle, ruff, mypy.

These run on every test run (the README's test command), so the structure is kept by the
suite rather than by memory. They read the source with ``ast`` (every import counts,
including imports inside functions; imports under ``if TYPE_CHECKING:`` do not, since they
never run).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "hivepark"
HEAVY = ("pyspark", "sqlglot", "sqlalchemy", "pyiceberg")

# Which hivepark layers a layer may import (its own always). Read top to bottom: a layer
# only reaches down. See docs/architecture.md, "Layers".
LAYERS: dict[str, set[str]] = {
    "errors": set(),
    "lru": set(),
    "types": set(),
    "layout": {"errors"},
    "config": {"errors"},
    "expr": {"errors", "types"},
    "catalog": {"errors", "types", "layout", "expr"},
    "plan": {"errors", "lru", "types", "layout", "config", "expr", "catalog"},
    "sql": {"errors", "lru", "types", "layout", "config", "expr", "catalog", "plan"},
    "storage": {"errors", "lru", "types", "layout", "config", "expr", "catalog", "plan"},
    "exec": {"errors", "lru", "types", "layout", "config", "expr", "catalog", "plan", "sql",
             "storage"},
    "__init__": {"errors", "lru", "types", "layout", "config", "expr", "catalog", "plan", "sql",
                 "storage", "exec"},
    "cli": {"errors", "config", "sql", "exec", "__init__", "storage"},
}

# Third-party packages each layer may import.
HEAVY_ALLOWED: dict[str, set[str]] = {
    "catalog": {"sqlalchemy"},
    "sql": {"sqlglot"},
    "storage": {"pyspark"},
    "exec": {"pyspark"},
    "__init__": {"pyspark"},
    "cli": {"pyspark"},
}
# Single modules with a documented exception (docs/architecture.md, "Exceptions").
MODULE_ALLOWED: dict[str, set[str]] = {
    "hivepark.expr.from_sqlglot": {"sqlglot"},  # the tree is built from sqlglot's
    "hivepark.storage.handlers.jdbc": {"sqlglot", "sqlalchemy"},  # SQL in the source's dialect
    "hivepark.storage.handlers.jdbc_sql": {"sqlglot"},  # the pushed predicate in the source's dialect
    "hivepark.storage.handlers.iceberg": {"pyiceberg"},  # Iceberg tables: catalog, file planning, commits
    "hivepark.storage.handlers.iceberg_expr": {"pyiceberg"},  # the pushed predicate as Iceberg's expressions
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(SRC).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """Every module ``module`` imports when it runs (package-relative imports resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".")
                if path.name != "__init__.py":
                    pkg = pkg[:-1]
                pkg = pkg[: len(pkg) - node.level + 1]
                base = ".".join(pkg + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(p, m, modules) for m, p in modules.items()}


def test_layers_only_reach_down(graph):
    wrong = []
    for module, imported in sorted(graph.items()):
        layer = _layer(module)
        for target in sorted(imported):
            top = target.split(".")[0]
            if top == "hivepark":
                other = _layer(target)
                if other != layer and other not in LAYERS[layer]:
                    wrong.append(f"{module} imports {target} ({layer} may not use {other})")
            elif top in HEAVY:
                allowed = HEAVY_ALLOWED.get(layer, set()) | MODULE_ALLOWED.get(module, set())
                if top not in allowed:
                    wrong.append(f"{module} imports {top}")
    assert not wrong, "import layers broken:\n" + "\n".join(wrong)


def test_no_import_cycle(graph):
    """Tarjan's strongly connected components over every import, inside functions too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph or w == v:
                continue
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    assert not cycles, f"import cycles: {cycles}"


def test_pure_core_loads_no_heavy_package():
    """Importing the pure core (every module of it) loads none of pyspark, sqlglot, sqlalchemy."""
    core = [m for m in _modules() if _layer(m) in ("types", "layout", "expr", "plan", "errors")
            and m not in MODULE_ALLOWED]
    code = ("import sys, importlib\n"
            f"for m in {core!r}: importlib.import_module(m)\n"
            f"print(sorted({{k.split('.')[0] for k in sys.modules}} & set({HEAVY!r})))")
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout.strip()
    assert out == "[]", f"the pure core loaded {out}"


def _tool(name: str) -> str:
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run scripts/setup.sh (it installs .[test])")
    return found


def test_ruff_clean():
    run = subprocess.run([_tool("ruff"), "check", "src", "tests", "bench"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_clean():
    run = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
