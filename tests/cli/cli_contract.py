"""What every failing tritonkit command promises: exit 2, one `file: field: problem; fix` line per problem."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from tritonkit.cli.main import cli

# file: field: problem; fix -- exactly one "; " so the problem and the fix can be told apart.
ERROR_LINE = re.compile(r"^(?P<file>[^:\s][^:]*): (?P<field>[^:]+?): (?P<problem>[^;]+); (?P<fix>[^;]+)$")


@dataclass
class Outcome:
    """Exit code and streams of one tritonkit run, however it was run."""

    exit_code: int
    stdout: str
    stderr: str


def run_in_process(args: list[str], cwd: Path) -> Outcome:
    """The real CLI through click's runner, in `cwd`; an unexpected exception is kept, not raised."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, args, prog_name="tritonkit")
    finally:
        os.chdir(old)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return Outcome(result.exit_code, result.stdout, stderr)


def run_subprocess(args: list[str], cwd: Path) -> Outcome:
    """`python -m tritonkit ARGS` as its own process, as a user runs it."""
    proc = subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    return Outcome(proc.returncode, proc.stdout, proc.stderr)


def assert_one_line_errors(outcome: Outcome, first_prefix: str) -> list[str]:
    """Exit 2, no traceback, every stderr line in the one-line form, the first starting with `first_prefix`."""
    assert "Traceback" not in outcome.stderr + outcome.stdout, outcome.stderr
    assert outcome.exit_code == 2, (outcome.exit_code, outcome.stderr)
    lines = outcome.stderr.splitlines()
    assert lines, "no error message on stderr"
    for line in lines:
        assert ERROR_LINE.match(line), f"not `file: field: problem; fix`: {line!r}"
    assert lines[0].startswith(first_prefix), f"first line {lines[0]!r} does not start with {first_prefix!r}"
    return lines


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` (hidden ones too) with its bytes; None for directories."""
    return {
        p.relative_to(root).as_posix(): (None if p.is_dir() else p.read_bytes())
        for p in sorted(root.rglob("*"))
    }
