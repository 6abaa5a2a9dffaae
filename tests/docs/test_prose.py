"""The product's text reads as a manual for its users, not as a record of how it was made.

README.md stays short (at most 150 lines). README.md, the docs pages, the starters' and examples' specs and the
code's comments and docstrings name no commit and use no words about the work that made the software (work
sessions, numbered stops or rounds, issue numbers, throw-away experiments, manual checks, dated changes).
Measurements live on docs/benchmarks.md, the one page that may name the commit a table was measured at (at most
once per table). Plain pytest: reads files, starts nothing.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

README_MAX_LINES = 150
BENCHMARKS_PAGE = REPO_ROOT / "docs" / "benchmarks.md"

#: A commit named the way a changelog would: "at 1a2b3c4", "before 1a2b3c4", "since ...", "in ...", "after ...".
COMMIT_AFTER_WORD = re.compile(r"\b(?:at|before|since|in|after|until)\s+`?[0-9a-f]{7,40}\b")
#: A standalone hex word of 7-40 characters with both digits and letters: what a commit hash looks like.
HEX_WORD = re.compile(r"(?<![\w./#:-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-])")
MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
#: Words about how the project was made, not about what the software does.
HISTORY = re.compile(
    r"\bthis (?:work )?session\b"
    r"|(?<![.\w])stops? ?-?\d+\b"                          # "stop 42", "stop-29 gateway" (not "start..stop-1")
    r"|\bissues? #?\d+"                                    # "issue 23", "issue #24"
    r"|(?<!from )(?<!from-)\bscratch\b"                    # "(scratch, 16 rounds)"; "from scratch" is English
    r"|\bchecked by hand\b"
    r"|\b(?:round|pass|stage|step) \d+ of (?:the )?work\b"
    r"|\bthe issue\b"                                      # "as the issue asks"
    r"|\bthis commit\b"
    rf"|\b(?:since|until|before|after) (?:\d{{4}}-\d{{2}}-\d{{2}}|(?:{MONTHS}) \d{{4}})",
    re.IGNORECASE,
)
#: A table's header rule in markdown: one per table.
TABLE_RULE = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$")


def _markdown_pages() -> list[Path]:
    return [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").rglob("*.md"))]


def _spec_files() -> list[Path]:
    """The starters' files (what `tritonkit init` writes), the shipped pipeline specs and the examples' specs."""
    package = REPO_ROOT / "toolkit" / "tritonkit"
    found = [p for p in (package / "pipelines").glob("*/starter/**/*") if p.is_file()]
    found += sorted((package / "starters").rglob("*.py"))
    found += sorted((REPO_ROOT / "ensembles").glob("*.yaml"))
    found += sorted((REPO_ROOT / "examples").rglob("*.yaml")) + [REPO_ROOT / "tritonkit.yaml"]
    return sorted(set(found))


def _python_files() -> list[Path]:
    """Python sources whose comments and docstrings are product text (this test's own patterns excepted)."""
    roots = ["toolkit", "benchmarks", "scripts", "examples", "tests", "docs/hooks"]
    files = [p for root in roots for p in sorted((REPO_ROOT / root).rglob("*.py"))]
    return [p for p in files if p != Path(__file__).resolve() and "tests/data" not in p.as_posix()]


def _flags(text: str, *, commits: bool = True) -> list[str]:
    found = [m.group(0) for m in HISTORY.finditer(text)]
    if commits:
        found += [m.group(0) for m in COMMIT_AFTER_WORD.finditer(text)]
        found += [m.group(0) for m in HEX_WORD.finditer(text)]
    return found


def _lines_flagged(path: Path, lines: Iterator[tuple[int, str]], *, commits: bool = True) -> list[str]:
    where = path.relative_to(REPO_ROOT)
    return [f"{where}:{number}: {found!r} in {line.strip()[:160]!r}"
            for number, line in lines for found in _flags(line, commits=commits)]


def _python_prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every comment and docstring line of a Python file."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                for offset, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + offset, line


def _yaml_comments(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if "#" in line:
            yield number, line[line.index("#"):]


def test_the_patterns_find_what_they_are_for() -> None:
    """Each pattern catches its kind of sentence and lets ordinary product text through."""
    for bad in ("measured at c2123ff", "before b0c2019 it copied", "0625c54 moved the weights", "as at stop 42",
                "the stop-29 gateway", "issue 23's aims", "issue #24", "(scratch, 16 rounds)", "Checked by hand:",
                "until 2026-12-05", "since December 2026", "as the issue asks", "64 since this commit",
                "this session's machine"):
        assert _flags(bad), bad
    for good in ("tritonkit build --json", "start..stop-1 of the signal", "retrain from scratch", "a from-scratch run",
                 "stop_token_ids", "a 1536-wide input", "sha256 of every file", "stop strings", "in 16-token blocks",
                 "`openssl rand -hex 24`", "decoded at 2026 Hz"):
        assert not _flags(good), good


def test_readme_is_short() -> None:
    lines = (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): details go into docs/, "
        "measurements into docs/benchmarks.md")


@pytest.mark.parametrize("page", _markdown_pages(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_pages_name_no_commit_and_tell_no_history(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    numbered = list(enumerate(text.splitlines(), 1))
    flagged = _lines_flagged(page, iter(numbered), commits=page != BENCHMARKS_PAGE)
    assert not flagged, "words about how the project was made, or commit hashes:\n" + "\n".join(flagged)


def test_benchmarks_page_names_at_most_one_commit_per_table() -> None:
    lines = BENCHMARKS_PAGE.read_text(encoding="utf-8").splitlines()
    tables = sum(bool(TABLE_RULE.match(line)) for line in lines)
    commits = [m.group(0) for line in lines for m in HEX_WORD.finditer(line)]
    assert tables, "docs/benchmarks.md has no table"
    assert len(commits) <= tables, f"{len(commits)} commits named for {tables} tables: {commits}"


@pytest.mark.parametrize("spec", _spec_files(), ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_starters_and_example_specs_tell_no_history(spec: Path) -> None:
    lines = _yaml_comments(spec) if spec.suffix in (".yaml", ".yml") else enumerate(
        spec.read_text(encoding="utf-8").splitlines(), 1)
    flagged = _lines_flagged(spec, iter(lines))
    assert not flagged, "\n".join(flagged)


def test_code_comments_and_docstrings_tell_no_history() -> None:
    flagged = [line for path in _python_files() for line in _lines_flagged(path, _python_prose(path))]
    assert not flagged, f"{len(flagged)} comment or docstring lines:\n" + "\n".join(flagged)
