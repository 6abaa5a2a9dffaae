"""The package's import graph read from its source: which module imports which, and where (at module level, inside a
function, or for type checking only), and the circles in it."""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "toolkit" / "tritonkit"


@dataclass(frozen=True)
class Edge:
    """`source` imports `target`: at `kind` "top" (module level), "function" or "type" (under TYPE_CHECKING)."""

    source: str
    target: str
    kind: str
    line: int


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    """Every module of the package (starter projects' model code left out: it is not imported by tritonkit)."""
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "starter" not in p.parts}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _imported(node: ast.Import | ast.ImportFrom, module: str, path: Path) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (a.name for a in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
    yield from (f"{base}.{a.name}" for a in node.names)


def edges() -> list[Edge]:
    """Every import of a tritonkit module by another."""
    known = modules()
    found: list[Edge] = []

    def visit(node: ast.AST, module: str, path: Path, kind: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for part in child.body:
                    visit_one(part, module, path, "type")
                for part in child.orelse:
                    visit_one(part, module, path, kind)
            else:
                visit_one(child, module, path, kind)

    def visit_one(node: ast.AST, module: str, path: Path, kind: str) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for name in _imported(node, module, path):
                target = _resolve(name, known) if name.startswith("tritonkit") else None
                if target is not None and target != module:
                    found.append(Edge(module, target, kind, node.lineno))
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and kind == "top"
        visit(node, module, path, "function" if function else kind)

    for module, path in known.items():
        visit(ast.parse(path.read_text(), str(path)), module, path, "top")
    return found


def circles(kinds: frozenset[str] = frozenset({"top", "function"})) -> list[list[str]]:
    """The strongly connected groups of two modules or more over the imports of `kinds` (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in modules()}
    for edge in edges():
        if edge.kind in kinds:
            graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in graph:
        if node not in index:
            strong(node)
    return sorted(found)
