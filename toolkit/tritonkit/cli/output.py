"""How commands report: one-line errors with exit code 2, a table or JSON on success."""
import dataclasses
import difflib
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tritonkit.errors import Problem, TritonkitError
from tritonkit.extras import install_command

F = TypeVar("F", bound=Callable[..., Any])


def reports_errors(func: F) -> F:
    """Turns TritonkitError into its one-line messages on stderr (JSON on stdout with --json) and exit 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TritonkitError as exc:
            problems, exit_code = exc.problems, exc.exit_code
        except ModuleNotFoundError as exc:  # a module of one of tritonkit's extras: the pip command, no traceback
            module = (exc.name or "").split(".")[0]
            install = install_command(module)
            if install is None:
                raise
            problems, exit_code = [Problem("", "", f"needs the Python module '{module}', which is not installed",
                                           install)], 2
        # A problem with a command-line option has no file: the command stands in, as for usage errors.
        ctx = click.get_current_context(silent=True)
        command = ctx.command_path if ctx is not None else "tritonkit"
        report_problems([p if p.file else dataclasses.replace(p, file=command) for p in problems],
                        bool(kwargs.get("as_json")))
        sys.exit(exit_code)

    return wrapper  # type: ignore[return-value]


def report_problems(problems: list[Problem], as_json: bool) -> None:
    """The one rendering of failures: `{"ok": false, "errors": [...]}` on stdout with --json, one line each
    on stderr."""
    if as_json:
        emit_json({"ok": False, "errors": [p.__dict__ for p in problems]})
    for problem in problems:
        click.echo(problem.line(), err=True)


class OneLineUsageError(click.UsageError):
    """A click usage error (unknown option, bad value, missing argument) shown the house way:
    one `tritonkit CMD: --option: problem; fix` line, and JSON on stdout when --json was given."""

    def __init__(self, problem: Problem, as_json: bool) -> None:
        super().__init__(problem.line())
        self.problem, self.as_json = problem, as_json

    def show(self, file: Any = None) -> None:
        report_problems([self.problem], self.as_json)


def usage_problem(exc: click.UsageError) -> Problem:
    """`exc` as a located Problem: the command as file, the option or argument as field, click's message as
    problem, a close option or command name or --help as fix."""
    command = exc.ctx.command_path if exc.ctx is not None else "tritonkit"
    fix = f"see '{command} --help'"
    message = exc.format_message()
    field = "arguments"
    if isinstance(exc, click.NoSuchOption):
        field, message = exc.option_name, f"no such option {exc.option_name!r}"
        fix = f"did you mean {' or '.join(sorted(exc.possibilities))}? ({fix})" if exc.possibilities else fix
    elif isinstance(exc, click.BadParameter) and exc.param is not None:
        param = exc.param
        field = max(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name
        if not isinstance(exc, click.MissingParameter):
            message = exc.message
    elif message.startswith("No such command") and exc.ctx is not None and isinstance(exc.ctx.command, click.Group):
        field, wrong = "COMMAND", message.split("'")[1]
        message = f"no such command {wrong!r}"  # without click's own suggestion, which not every click version makes
        close = difflib.get_close_matches(wrong, exc.ctx.command.list_commands(exc.ctx), n=1)
        fix = f"did you mean '{close[0]}'? ({fix})" if close else fix
    problem = message.rstrip(".").replace("; ", ", ")
    return Problem(command, field, problem[:1].lower() + problem[1:], fix)


def echo_warnings(warnings: list[Problem]) -> None:
    """Checks that pass in Triton but not by tritonkit's stricter rule: one `warning:` line each on stderr."""
    for w in warnings:
        click.echo(f"warning: {w.line()}", err=True)


def emit_json(payload: Any) -> None:
    click.echo(json.dumps(payload, indent=2, default=str))


json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")
spec_option = click.option("-f", "--file", "spec", default="tritonkit.yaml", show_default=True,
                           type=click.Path(path_type=Path), help="Spec file.")


def options(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    """Several click options as one decorator, listed in the order `--help` shows them (click applies bottom-up)."""
    return lambda func: functools.reduce(lambda f, option: option(f), reversed(decorators), func)
