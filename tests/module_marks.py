"""Leaves a test module unimported when its own `pytestmark` already deselects all of it under `-m`.

`make unit` (`-m "not server and not slow"`) would otherwise import every server and slow module only to deselect
its tests, and their imports (torch, tritonclient, moto, openai) were most of the subset's collection time. A module
is left out only when no marks its tests could add would make the expression select them, so `-m` selects exactly
what it selected before; without `-m` (`make test`) every module is collected as always.
"""
from __future__ import annotations

import ast
import itertools
from collections.abc import Callable
from pathlib import Path

import pytest
from _pytest.mark.expression import Expression


def module_marks(path: Path) -> set[str]:
    """The mark names of the module's `pytestmark = ...` (pytest.mark.NAME, alone or in a list)."""
    text = path.read_text(encoding="utf-8")
    if "pytestmark" not in text:
        return set()
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            return {n.attr for n in ast.walk(node.value)
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}
    return set()


def deselects_all(expression: Expression, marks: set[str]) -> bool:
    """True when the expression is false for the module's marks plus any of the names it mentions."""
    others = sorted(expression.idents() - marks)
    subsets = itertools.chain.from_iterable(itertools.combinations(others, k) for k in range(len(others) + 1))
    return not any(expression.evaluate(matcher(marks | set(extra))) for extra in subsets)


def matcher(present: set[str]) -> Callable[..., bool]:
    """`-m`'s matcher for a test carrying the marks `present`; a mark with arguments is left to pytest."""

    def match(name: str, /, **kwargs: object) -> bool:
        if kwargs:
            raise pytest.UsageError(f"-m {name}(...): left to pytest")
        return name in present

    return match


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    markexpr = config.option.markexpr
    if not markexpr or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    try:
        marks = module_marks(collection_path)
        return True if marks and deselects_all(Expression.compile(markexpr), marks) else None
    except (SyntaxError, UnicodeDecodeError, pytest.UsageError):
        return None  # collected as usual: pytest reports what is wrong with it
