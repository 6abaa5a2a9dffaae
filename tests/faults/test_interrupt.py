"""Ctrl-C (SIGINT) during `build` (while exporting), `export` and `serve` (while models load): the command
exits, no process it started is left running, and no half-written file or staging folder remains."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require
from tests.faults.conftest import descendants, interrupt, wait_gone
from tests.serve.conftest import _write_python_model

pytestmark = pytest.mark.slow

SLOW_INIT = '''
import time

class TritonPythonModel:
    def initialize(self, args):
        time.sleep(30)
'''


def _example(root: Path) -> Path:
    shutil.copy(REPO_ROOT / "tritonkit.yaml", root)
    for folder in ("ensembles", "models", "examples"):
        shutil.copytree(REPO_ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if "__pycache__" not in p.parts}


def _start(project: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tritonkit", *args], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _wait_for_child(proc: subprocess.Popen, timeout: float = 60.0) -> list[int]:
    """The command's process tree once it has started a child (an export process, a server)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        tree = descendants(proc.pid)
        if tree:
            time.sleep(1.0)  # let the child get going
            return descendants(proc.pid)
        time.sleep(0.05)
    raise AssertionError("the command started no child process")


@pytest.mark.parametrize("command", [["build"], ["export", "mlp"]])
def test_ctrl_c_during_export_leaves_no_process_and_no_partial_files(tmp_path: Path, command: list[str]) -> None:
    require("torch", "pip install 'tritonkit[export]'")
    project = _example(tmp_path)
    before = _files(project)
    proc = _start(project, *command)
    tree = _wait_for_child(proc)
    _, stderr = interrupt(proc)
    assert proc.returncode != 0, stderr
    assert "Traceback" not in stderr, stderr
    assert wait_gone(tree) == [], "a process the command started is still running"
    new = _files(project) - before
    partial = [p for p in new if ".tmp" in p or ".old-" in p or p.startswith("model_repository")]
    assert partial == [], partial


@pytest.mark.server
def test_ctrl_c_while_serve_loads_stops_the_server_and_leaves_no_state(tmp_path: Path) -> None:
    require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
    _write_python_model(tmp_path / "model_repository", "sleepy_init", SLOW_INIT)
    proc = _start(tmp_path, "serve")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the server and the model's stub are up
        tree = descendants(proc.pid)
        if len(tree) >= 2:
            break
        time.sleep(0.1)
    assert len(tree) >= 2, "server or stub never started"
    _, stderr = interrupt(proc, signal.SIGINT)
    assert proc.returncode == 0 and "stopping Triton" in stderr, stderr  # a stop asked for, as after serving
    assert "Traceback" not in stderr
    assert wait_gone(tree) == [], "the server or its stubs were left running"
    assert not (tmp_path / ".tritonkit" / "server.json").exists()
