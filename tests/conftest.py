"""Shared fixtures: the repository root and a runner for the real `tritonkit` CLI."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs `python -m tritonkit ARGS` as a user would, capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
