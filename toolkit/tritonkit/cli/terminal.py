"""How commands talk to a person: colour and one line updated in place on a terminal, plain lines in CI, pipes and logs.

A stream counts as a terminal when it is a TTY and neither NO_COLOR (no-color.org) nor CI is set, and TERM is
not `dumb`; everything else (a pipe, a file, a CI log) gets plain lines without escape codes. `--json` commands
show no progress at all, so their stdout stays one document and their stderr stays quiet.
"""
import os
import sys
from contextlib import AbstractContextManager
from typing import IO

import click
from rich.console import Console
from rich.status import Status
from rich.text import Text

#: Words coloured in reports on a terminal.
COLOURS = {"PASS": "green", "FAIL": "bold red", "skip": "yellow", "not ready": "bold red"}


def interactive(stream: IO[str] | None = None) -> bool:
    """True when `stream` (stderr by default) is a terminal a person watches, not a pipe or a CI log."""
    stream = stream if stream is not None else sys.stderr
    if os.environ.get("NO_COLOR") or os.environ.get("CI") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def echo_report(text: str) -> None:
    """A report on stdout: PASS/FAIL/skip coloured on a terminal, the same text plain elsewhere."""
    if not interactive(sys.stdout):
        click.echo(text)
        return
    painted = Text(text)
    for word, style in COLOURS.items():
        painted.highlight_words([word], style)
    Console(highlight=False, soft_wrap=True).print(painted)


class StatusLine(AbstractContextManager["StatusLine"]):
    """One stderr line updated in place on a terminal (a spinner and the latest text).

    Off a terminal, `every=True` prints each update as its own line (progress a log should keep) and
    `every=False` only the first one, so a pipe sees a start line rather than one line a second.
    `enabled=False` (--json, --quiet) shows nothing. Use it as a context manager: the line goes on exit.
    """

    def __init__(self, *, every: bool = False, enabled: bool = True) -> None:
        self.every, self.enabled = every, enabled
        self.live = enabled and interactive()
        self._status: Status | None = None
        self._printed = False

    def update(self, text: str) -> None:
        if not self.enabled:
            return
        if self.live:
            if self._status is None:  # Text: brackets such as `[export mlp 1.2s]` are not rich markup
                self._status = Console(stderr=True, highlight=False).status(Text(text))
                self._status.start()
            else:
                self._status.update(Text(text))
        elif self.every or not self._printed:
            click.echo(text, err=True)
            self._printed = True

    def keep(self, text: str) -> None:
        """A line that stays (closes the live line first)."""
        self.close()
        if self.enabled:
            click.echo(text, err=True)

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __exit__(self, *exc: object) -> None:
        self.close()


class ExportDisplay:
    """`tritonkit build`'s export progress (export.progress.Progress): on a terminal one live line for the model
    being exported and one kept line per model when it is done; elsewhere every `[export MODEL Ns] stage` line."""

    def __init__(self, line: StatusLine) -> None:
        self.line = line
        self.last: tuple[str, str, float] | None = None

    def __call__(self, model: str, stage: str, elapsed_s: float) -> None:
        if self.line.live and self.last is not None and self.last[0] != model:
            self.done()
        self.last = (model, stage, elapsed_s)
        self.line.update(f"[export {model} {elapsed_s:6.1f}s] {stage}")

    def done(self) -> None:
        """Keeps the finished model's last line (on a terminal; elsewhere it was printed already)."""
        if self.line.live and self.last is not None:
            model, stage, elapsed_s = self.last
            self.line.keep(f"[export {model} {elapsed_s:6.1f}s] {stage}")
        self.last = None
