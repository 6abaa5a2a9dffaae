"""tests/module_marks.py: under `-m`, a module whose pytestmark deselects it is not imported; otherwise it is.

An inner pytest session over a module that raises when imported (standing in for torch's import cost)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow  # two inner pytest sessions: seconds

MARKED = 'import pytest\n\npytestmark = [pytest.mark.slow]\nraise RuntimeError("imported")\n'
UNMARKED = """import pytest

@pytest.mark.slow
def test_slow():
    pass

def test_fast():
    pass
"""


def inner(tmp_path: Path, markexpr: str) -> str:
    (tmp_path / "test_marked.py").write_text(MARKED)
    (tmp_path / "test_unmarked.py").write_text(UNMARKED)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.module_marks", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), "-o", "markers=slow", "-m", markexpr, str(tmp_path)],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    return run.stdout


def test_a_module_its_marks_deselect_is_not_imported_and_one_they_may_select_is(tmp_path: Path) -> None:
    fast = inner(tmp_path, "not slow and not server")
    assert "1 passed, 1 deselected" in fast and "imported" not in fast, fast
    slow = inner(tmp_path, "slow or server")  # could select test_marked.py: imported, so its error shows
    assert "RuntimeError: imported" in slow and "1 error" in slow, slow
