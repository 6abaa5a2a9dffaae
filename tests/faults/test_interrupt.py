"""Ctrl-C (SIGINT) during `build` (while exporting), `export` and `serve` (while models load): the command
exits, no process it started is left running, and no half-written file or staging folder remains."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require
from tests.faults.conftest import alive, descendants, interrupt, psutil, wait_gone
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


TUNE_ARGS = ["tune", "batchy", "--measurement-requests", "30", "--max-instances", "2", "--max-batch-size", "8",
             "--no-sweep", "--budget-minutes", "8"]


class _Stderr:
    """Collects a child's stderr on a thread, so waiting for a line has a deadline and nothing is lost."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._pump, args=(proc,), daemon=True)
        self.thread.start()

    def _pump(self, proc: subprocess.Popen) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append(line)

    def wait_for(self, marker: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(marker in line for line in list(self.lines)):
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError(f"no {marker!r} within {timeout} s: {self.text()[-2000:]}")
            time.sleep(0.2)

    def text(self) -> str:
        self.thread.join(timeout=5.0)
        return "".join(self.lines)


@pytest.mark.server
@pytest.mark.timeout(600)
def test_ctrl_c_during_tune_stops_model_analyzer_and_its_servers(tmp_path: Path) -> None:
    """SIGINT while Model Analyzer measures: tune exits 2 naming the checkpoint, Model Analyzer, tritonserver,
    its stubs and perf_analyzer are all gone, the spec is byte for byte the same, and every checkpoint file Model
    Analyzer left is whole (it parses), so the next run can resume from it."""
    require("model_analyzer", "pip install 'tritonkit[tune]'")
    require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
    from tests.tune.conftest import write_batchy_project

    spec = write_batchy_project(tmp_path / "project")
    project, before = spec.parent, spec.read_bytes()
    proc = subprocess.Popen([sys.executable, "-m", "tritonkit", *TUNE_ARGS], cwd=project, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    err = _Stderr(proc)
    try:
        err.wait_for("measuring batchy_config_", timeout=400)
        time.sleep(2.0)  # perf_analyzer is running against the server
        tree = descendants(proc.pid)
        names = {psutil.Process(pid).name() for pid in alive(tree)}
        assert {"tritonserver", "perf_analyzer"} <= names, names
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=240)
    finally:
        proc.kill()
    stderr = err.text()
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert "interrupted after" in last and "the spec is unchanged" in last, last
    assert wait_gone(tree) == [], [psutil.Process(p).cmdline() for p in alive(tree)]
    assert spec.read_bytes() == before
    tune_dir = project / ".tritonkit" / "tune" / "batchy"
    assert list((tune_dir / "pids").glob("*.pid")) == []
    for ckpt in (tune_dir / "checkpoints").glob("*.ckpt"):
        json.loads(ckpt.read_text())
    leftovers = [str(p) for p in project.rglob("*") if p.name.endswith((".tmp", ".part")) or ".old-" in p.name]
    assert leftovers == [], leftovers
