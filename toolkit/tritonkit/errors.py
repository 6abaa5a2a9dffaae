"""Errors as values with a location and a fix, rendered once at the CLI edge as one line."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar


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


@dataclass(frozen=True)
class Where:
    """A location in user input: the file and the dotted field inside it ("" for the file as a whole)."""

    file: str
    field: str = ""

    def at(self, sub: str) -> Where:
        """The field `sub` below this one: `models.m` at `source` is `models.m.source`."""
        return Where(self.file, f"{self.field}.{sub}" if self.field else sub)

    def __str__(self) -> str:
        return f"{self.file}: {self.field}" if self.field else self.file


#: The location of a check run outside any spec (a helper, a test): no file, no field.
NOWHERE = Where("")


@dataclass
class Problem:
    """One thing wrong with user input: where it is, what is wrong, how to fix it."""

    file: str
    field: str
    problem: str
    fix: str

    @classmethod
    def at(cls, where: Where, problem: str, fix: str) -> Problem:
        return cls(where.file, where.field, problem, fix)

    def line(self) -> str:
        """The one-line form users see: `file: field: problem; fix`."""
        return one_line(f"{Where(self.file, self.field)}: {self.problem}; {self.fix}")


E = TypeVar("E", bound="TritonkitError")


class TritonkitError(Exception):
    """A failure the user can act on; carries one or more located problems."""

    exit_code = 2

    def __init__(self, file: str, field: str, problem: str, fix: str) -> None:
        self.problems = [Problem(file, field, problem, fix)]
        super().__init__(self.problems[0].line())

    @classmethod
    def at(cls: type[E], where: Where, problem: str, fix: str) -> E:
        """The error located at `where` (an instance of the class it is called on)."""
        return cls(where.file, where.field, problem, fix)

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
