"""`make demo` (scripts/demo.py) in a copy of the example project: it says how to keep the server before it
stops it, and the examples it prints work when pasted into a shell against the server KEEP=1 leaves running."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_cli
from tests.smoke.test_smoke_embedded import copy_example

pytestmark = pytest.mark.server


def demo(project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "demo.py")], cwd=project, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **env})


def snippets(output: str) -> list[str]:
    """The curl command (with its continuation line) and the Python heredoc, exactly as printed."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("curl "))
    curl = "\n".join(lines[start:start + 2])
    begin = next(i for i, line in enumerate(lines) if line.endswith(" - <<'PY'"))
    heredoc = "\n".join(lines[begin:lines.index("PY", begin) + 1])
    return [curl, heredoc]


def test_demo_says_how_to_keep_the_server_before_stopping_it(tmp_path: Path) -> None:
    result = demo(copy_example(tmp_path / "project"))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.index("KEEP=1 make demo") < out.index("$ tritonkit stop") < out.index("curl ")


def test_printed_examples_work_when_pasted(tmp_path: Path) -> None:
    project = copy_example(tmp_path / "project")
    result = demo(project, KEEP="1")
    try:
        assert result.returncode == 0, result.stdout + result.stderr
        assert "$ tritonkit stop" not in result.stdout
        curl, heredoc = snippets(result.stdout)
        answer = subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert answer.returncode == 0 and '"name":"PROBS"' in answer.stdout, answer.stdout + answer.stderr
        printed = subprocess.run(["bash", "-c", heredoc], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
        assert printed.returncode == 0, printed.stderr
        probabilities = [float(v) for v in printed.stdout.strip().strip("[]").split()]
        assert len(probabilities) == 3 and sum(probabilities) == pytest.approx(1.0, abs=1e-4)
    finally:
        assert run_cli("stop", cwd=project).returncode == 0
