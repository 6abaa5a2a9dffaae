"""How commands report: one-line errors with exit code 2, a table or JSON on success."""
from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from tritonkit.errors import Problem, TritonkitError

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Turns TritonkitError into its one-line messages on stderr (JSON on stdout with --json) and exit 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TritonkitError as exc:
            if kwargs.get("as_json"):
                emit_json({"ok": False, "errors": [p.__dict__ for p in exc.problems]})
            for line in exc.lines():
                click.echo(line, err=True)
            sys.exit(exc.exit_code)

    return wrapper  # type: ignore[return-value]


def echo_warnings(warnings: list[Problem]) -> None:
    """Checks that pass in Triton but not by tritonkit's stricter rule: one `warning:` line each on stderr."""
    for w in warnings:
        click.echo(f"warning: {w.line()}", err=True)


def emit_json(payload: Any) -> None:
    """Machine-readable output on stdout, one JSON document."""
    click.echo(json.dumps(payload, indent=2, default=str))


def json_option(func: F) -> F:
    """The shared `--json` flag (bound to `as_json`)."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")(func)
