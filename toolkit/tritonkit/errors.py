"""Errors as values with a location and a fix, rendered once at the CLI edge as one line."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def shown_path(path: Path) -> str:
    """How a file is named in messages: relative to the working directory when it is below it."""
    try:
        return os.path.relpath(path)
    except ValueError:
        return str(path)


def one_line(text: str) -> str:
    """`text` with control and line-separator characters escaped (`\\n`, `\\u2028`): a message is one line
    even when it quotes a name or value from user input."""
    return text if text.isprintable() else "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


@dataclass
class Problem:
    """One thing wrong with user input: where it is, what is wrong, how to fix it."""

    file: str
    field: str
    problem: str
    fix: str

    def line(self) -> str:
        """The one-line form users see: `file: field: problem; fix`."""
        where = f"{self.file}: {self.field}" if self.field else self.file
        return one_line(f"{where}: {self.problem}; {self.fix}")


class TritonkitError(Exception):
    """A failure the user can act on; carries one or more located problems."""

    exit_code = 2

    def __init__(self, file: str, field: str, problem: str, fix: str) -> None:
        self.problems = [Problem(file, field, problem, fix)]
        super().__init__(self.problems[0].line())

    @classmethod
    def of(cls, problems: list[Problem]) -> TritonkitError:
        """Wraps several problems found in one pass (validation reports all it finds)."""
        first = problems[0]
        err = cls(first.file, first.field, first.problem, first.fix)
        err.problems = list(problems)
        return err

    @property
    def file(self) -> str:
        return self.problems[0].file

    @property
    def field(self) -> str:
        return self.problems[0].field

    @property
    def problem(self) -> str:
        return self.problems[0].problem

    @property
    def fix(self) -> str:
        return self.problems[0].fix

    def line(self) -> str:
        return self.problems[0].line()

    def lines(self) -> list[str]:
        return [p.line() for p in self.problems]
