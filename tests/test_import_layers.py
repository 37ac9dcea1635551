"""The import graph of ``treehop`` is layered: no cycle, and only the top layer imports the client.

``treehop.client`` composes everything (stores, memory, search options, reader processes), so a
module below it that imports it, even lazily inside a function, ties the layers into a circle:
the module cannot be read, tested or imported on its own, and an import-order change turns into
an ImportError at run time. This test parses every module with :mod:`ast` (imports at module
level, inside functions and under ``TYPE_CHECKING`` alike) and checks (a) that only the modules
named in ``ABOVE_CLIENT`` import ``treehop.client`` and (b) that the graph among treehop modules
has no cycle (the assert names one). A package's ``__init__`` re-exports its parts, so the
implicit import of a parent package by ``import a.b`` is not an edge, but an explicit
``from treehop.x import y`` of a package is one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "retrieval" / "treehop"

ABOVE_CLIENT = frozenset(
    {
        "treehop",  # the package's __init__ re-exports Treehop
        "treehop.cli._app",  # the command line drives a client
        "treehop.mcp_server",  # the MCP server wraps a client
        "treehop.reader_worker",  # a reader process's entry point opens a read-only client
        "treehop.demo",  # the demo builds and queries a client
        "treehop.integration_kit",  # what the LangChain / LlamaIndex packages wrap: clients
        "treehop.ingest.records",  # add_records() takes a Treehop / AsyncTreehop to write through
    }
)
"""Modules legitimately above ``treehop.client`` (they exist to drive a client)."""


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The treehop modules ``name`` imports anywhere in its source."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "treehop")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "treehop":
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            found.update(subs)
            if len(subs) < len(node.names):  # names taken from the module itself
                found.add(target)
    return {m for m in found if m in known and m != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = _modules(root)
    known = set(mods)
    return {name: _imports(name, path, known) for name, path in mods.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path that returns to its start), or ``None``."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_only_the_top_layer_imports_the_client() -> None:
    graph = import_graph()
    assert "treehop.client" in graph
    below = sorted(
        m for m, deps in graph.items() if "treehop.client" in deps and m not in ABOVE_CLIENT
    )
    assert not below, f"modules below the client import treehop.client: {below}"


def test_the_import_graph_has_no_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checks_see_lazy_imports_and_cycles(tmp_path: Path) -> None:
    """The parser finds an import inside a function and a relative ``from . import``; the
    cycle search reports a three-module circle."""
    pkg = tmp_path / "treehop"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("from .. import c\n")
    (pkg / "c.py").write_text("import treehop.a\n")
    graph = import_graph(pkg)
    assert graph["treehop.a"] == {"treehop.sub.b"}
    assert graph["treehop.sub.b"] == {"treehop.c"}
    assert find_cycle(graph) == ["treehop.a", "treehop.sub.b", "treehop.c", "treehop.a"]
    (pkg / "c.py").write_text("")
    assert find_cycle(import_graph(pkg)) is None


@pytest.mark.parametrize("module", ["treehop.reader_processes", "treehop.search_options"])
def test_lower_modules_stand_alone(module: str) -> None:
    """The modules of the old circle import nothing above them."""
    graph = import_graph()
    assert "treehop.client" not in graph[module]
