"""`tritonkit status` with two real background servers in two projects, and `serve`'s startup lines in a pipe."""
from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require, run_cli
from tests.serve.conftest import DOUBLE_MODEL, _write_python_model

pytestmark = pytest.mark.server
require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")

#: A model that takes 3 s to load: progress must not print a line a second while it loads.
SLOW = '''
import time

class TritonPythonModel:
    def initialize(self, args):
        time.sleep(3)

    def execute(self, requests):
        return []
'''


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Path, dict, str]]]:
    """Project `a` (double, slow) and project `b` (double), each served by `tritonkit serve --background` in a pipe."""
    root = tmp_path_factory.mktemp("status")
    started: dict[str, tuple[Path, dict, str]] = {}
    try:
        for name, models in (("a", ("double", "slow")), ("b", ("double",))):
            project = root / name
            for model in models:
                _write_python_model(project / "model_repository", model, SLOW if model == "slow" else DOUBLE_MODEL)
            run = run_cli("serve", "--background", cwd=project, timeout=180)
            assert run.returncode == 0, run.stderr
            pid = int(run.stdout.split("(pid ")[1].split(")")[0])
            state = json.loads((project / ".tritonkit" / "server.json").read_text())
            assert state["pid"] == pid
            started[name] = (project, state, run.stderr)
        yield started
    finally:
        for project, _, _ in started.values():
            run_cli("stop", cwd=project)


def status(project: Path, *args: str) -> dict:
    result = run_cli("status", "--json", *args, cwd=project)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_startup_in_a_pipe_is_one_start_line_not_one_a_second(projects) -> None:
    _, _, stderr = projects["a"]
    assert stderr.splitlines() == ["starting Triton: 2 models to load"]


def test_status_lists_this_projects_server_with_ports_pid_models_and_uptime(projects) -> None:
    for name, models in (("a", {"double", "slow"}), ("b", {"double"})):
        project, state, _ = projects[name]
        [server] = status(project)["servers"]
        assert (server["pid"], server["http_port"], server["grpc_port"], server["metrics_port"]) == (
            state["pid"], state["http_port"], state["grpc_port"], state["metrics_port"])
        assert server["project"] == str(project) and server["uptime_s"] > 0
        assert {m["name"] for m in server["models"] if m["ready"]} == models
    project, state, _ = projects["a"]
    text = run_cli("status", cwd=project).stdout.splitlines()
    assert text[0].split() == ["pid", "http", "grpc", "metrics", "uptime", "models"]
    assert text[1].split()[:4] == [str(state["pid"]), f"127.0.0.1:{state['http_port']}", str(state["grpc_port"]),
                                   str(state["metrics_port"])]
    assert text[1].endswith("double, slow")


def test_all_lists_every_project_s_server(projects, tmp_path: Path) -> None:
    listed = {s["pid"]: s["project"] for s in status(tmp_path, "--all")["servers"]}
    for project, state, _ in projects.values():
        assert listed[state["pid"]] == str(project)
    assert status(tmp_path)["servers"] == []  # not a project with a server: nothing by default
    assert "no tritonkit server running for this project" in run_cli("status", cwd=tmp_path).stdout
    table = run_cli("status", "--all", cwd=tmp_path).stdout.splitlines()
    assert table[0].split()[:2] == ["project", "pid"]
    assert {line.split()[0] for line in table[1:]} >= {str(p) for p, _, _ in projects.values()}


def test_a_model_that_is_not_ready_is_marked(projects) -> None:
    project, state, _ = projects["b"]
    url = f"http://127.0.0.1:{state['http_port']}/v2/repository/models/double/unload"
    with urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=30) as response:
        assert response.status == 200
    _wait_unloaded(state["http_port"], "double")   # the index says UNLOADING until the stub has gone
    [server] = status(project)["servers"]
    assert [(m["name"], m["ready"]) for m in server["models"]] == [("double", False)]
    assert run_cli("status", cwd=project).stdout.splitlines()[1].endswith("double (UNAVAILABLE: not ready)")
    coloured = run_in_terminal(["status"], project, {"CI": "", "NO_COLOR": ""})  # red on a terminal
    assert "\x1b[1;31mnot ready\x1b[0m" in coloured
    assert "\x1b[" not in run_in_terminal(["status"], project, {"CI": "1"})  # CI logs get plain text
    run_cli("stop", cwd=project)
    assert status(project)["servers"] == []


def run_in_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Runs `tritonkit ARGS` with a pseudo-terminal as stdin/stdout/stderr; returns everything it wrote."""
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tritonkit", *args], cwd=cwd, stdin=child, stdout=child,
                            stderr=child, env={**os.environ, "TERM": "xterm", "COLUMNS": "120", **env})
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=180) == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.parametrize("env", [{}, {"NO_COLOR": "1"}], ids=["terminal", "no-color"])
def test_on_a_terminal_startup_is_one_line_updated_in_place(tmp_path: Path, env: dict[str, str]) -> None:
    _write_python_model(tmp_path / "model_repository", "slow", SLOW)
    try:
        out = run_in_terminal(["serve", "--background"], tmp_path, {"CI": "", "NO_COLOR": "", **env})
    finally:
        run_cli("stop", cwd=tmp_path)
    before_ready = out[:out.index("Triton ready")]
    if env:  # NO_COLOR: plain text, the pipe's one start line
        assert before_ready.replace("\r", "").splitlines() == ["starting Triton: 1 models to load"]
        assert "\x1b[" not in before_ready
    else:  # one line redrawn in place: several states of it, no line break between the first and the last
        first, last = before_ready.index("waiting for Triton"), before_ready.rindex("waiting for Triton")
        assert len(set(re.findall(r"waiting for Triton: (\d+) s", before_ready))) >= 2
        assert "\n" not in before_ready[first:last]


def _wait_unloaded(http_port: int, model: str, timeout: float = 60) -> None:
    """Until the server's repository index shows `model` UNAVAILABLE (unloaded), or fail."""
    index_url = f"http://127.0.0.1:{http_port}/v2/repository/index"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(urllib.request.Request(index_url, data=b"{}", method="POST"),
                                    timeout=10) as response:
            states = {m["name"]: m.get("state") for m in json.loads(response.read())}
        if states.get(model) == "UNAVAILABLE":
            return
        time.sleep(0.2)
    raise AssertionError(f"{model} still {states.get(model)} after {timeout} s")
