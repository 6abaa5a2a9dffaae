"""The docs' runnable code blocks: found by the marker comment before them, run as a reader would paste them.

A fenced `bash` or `python` block preceded by `<!-- runnable -->` (`<!-- runnable: server -->` when it starts
the embedded Triton, `<!-- runnable: slow -->` when it takes more than a few seconds) is run by
tests/docs/test_snippets.py. A page's runnable blocks run in order in one fresh
folder, as a reader follows the page; the `tritonkit` on PATH is this environment's.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO_ROOT

MARKER = re.compile(r"^<!-- runnable(?::\s*(?P<tags>[\w ,-]+?))?\s*-->\s*$")
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<lang>[\w-]*)")
LANGUAGES = ("bash", "python")


@dataclass(frozen=True)
class Snippet:
    """One runnable block: where it is (page, first line), its language, its code and tags (`server`)."""

    page: Path
    line: int
    lang: str
    code: str
    tags: frozenset[str]

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO_ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every page of the docs site."""
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]


def snippets(page: Path) -> list[Snippet]:
    """The runnable blocks of `page`, in order; a marker not followed by a bash/python block is an error."""
    lines = page.read_text().splitlines()
    found: list[Snippet] = []
    for number, text in enumerate(lines):
        mark = MARKER.match(text.strip())
        if not mark:
            continue
        start = next((i for i in range(number + 1, len(lines)) if lines[i].strip()), len(lines))
        fence = FENCE.match(lines[start]) if start < len(lines) else None
        where = f"{page.relative_to(REPO_ROOT)}:{number + 1}"
        if not fence or fence["lang"] not in LANGUAGES:
            raise ValueError(f"{where}: the runnable marker must stand right before a ```bash or ```python block")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(fence["fence"])), None)
        if end is None:
            raise ValueError(f"{where}: the block after the runnable marker is never closed")
        tags = frozenset(t for t in re.split(r"[\s,]+", mark["tags"] or "") if t)
        found.append(Snippet(page, start + 1, fence["lang"], "\n".join(lines[start + 1:end]) + "\n", tags))
    return found


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment's `tritonkit` and python first on PATH, as after `pip install` into a virtualenv."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    env.update(extra or {})
    return env


def strict(code: str) -> str:
    """`code` with each complete command followed by `|| exit $?`, so a failure anywhere in `a && b && c` fails it.

    bash -e alone lets a failing `b` through (only the last command of an && list counts). A command is complete
    when the lines gathered so far parse (`bash -n`) and do not end in a continuation.
    """
    out, chunk = [], []
    for line in code.splitlines():
        chunk.append(line)
        text = "\n".join(chunk)
        if not text.strip() or text.rstrip().endswith("\\"):
            continue
        if subprocess.run(["bash", "-n", "-c", text], capture_output=True).returncode == 0:
            out.append(
                f"{{\n{text}\n}} || exit $?\n" if text.strip() and not text.lstrip().startswith("#") else text + "\n"
            )
            chunk = []
    return "".join(out) + ("\n".join(chunk) + "\n" if chunk else "")


class Reader:
    """Runs a page's blocks in order as one reader's shell would: a `cd` in one block holds for the next."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.cwd = folder
        self.env = env

    def run(self, snippet: Snippet, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """One block as pasted into bash (-e, pipefail: the first failing line fails it) or into python."""
        if snippet.lang == "python":
            return subprocess.run([sys.executable, "-c", snippet.code], cwd=self.cwd, env=self.env, capture_output=True,
                                  text=True, timeout=timeout)
        with tempfile.TemporaryDirectory() as scratch:
            where = Path(
                scratch, "pwd"
            )  # where the reader's shell stands afterwards (a file: a pipe would stay open in a background server)
            script = f"{strict(snippet.code)}printf '%s' \"$PWD\" > {shlex.quote(str(where))}\n"
            result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=self.cwd, env=self.env,
                                    capture_output=True, text=True, timeout=timeout)
            moved = where.read_text() if where.exists() else ""
        if result.returncode == 0 and moved:
            self.cwd = Path(moved)
        return result


def stop_servers(folder: Path, env: dict[str, str]) -> None:
    """`tritonkit stop` in every project under `folder` that a block left a background server in."""
    for state in folder.rglob(".tritonkit/server.json"):
        subprocess.run([sys.executable, "-m", "tritonkit", "stop"], cwd=state.parent.parent, env=env,
                       capture_output=True, timeout=60)
