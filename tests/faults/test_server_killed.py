"""The server killed: a foreground `tritonkit serve` exits non-zero naming the signal and the log; a background
server's stale state file is noticed by smoke, perf, stop and serve (one line; the file removed)."""
from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from tests.conftest import require, run_cli
from tests.faults.conftest import alive, descendants, interrupt, start_foreground, wait_gone
from tests.serve.conftest import _write_python_model

require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")

pytestmark = [pytest.mark.server, pytest.mark.slow]


def test_foreground_serve_exits_non_zero_naming_the_signal_and_the_log(tmp_path: Path) -> None:
    _write_python_model(tmp_path / "model_repository", "double")
    proc, info = start_foreground(tmp_path)
    tree = descendants(info["pid"]) + [info["pid"]]
    os.kill(info["pid"], signal.SIGKILL)
    try:
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert f"Triton server (pid {info['pid']}) exited while serving with signal 9 (SIGKILL)" in stderr
    assert info["log"] in stderr
    assert wait_gone(tree) == [], "stubs of the killed server were left running"
    assert not (tmp_path / ".tritonkit" / "server.json").exists()


def test_a_background_servers_stale_state_is_noticed_by_smoke_perf_stop_and_serve(tmp_path: Path) -> None:
    _write_python_model(tmp_path / "model_repository", "double")
    started = run_cli("serve", "--background", "--json", cwd=tmp_path, timeout=180)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    state = tmp_path / ".tritonkit" / "server.json"
    saved = tmp_path / "server.json.saved"
    shutil.copy(state, saved)
    tree = descendants(info["pid"]) + [info["pid"]]
    os.kill(info["pid"], signal.SIGKILL)
    assert wait_gone(tree) == [], "stubs of the killed server were left running"
    expected = "no longer running"

    for command in (["smoke"], ["perf", "double"]):
        shutil.copy(saved, state)
        result = run_cli(*command, cwd=tmp_path, timeout=60)
        assert result.returncode == 2, (command, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0] and info["log"] in lines[0], (command, result.stderr)
        assert "tritonkit serve --background" in lines[0]
        assert not state.exists(), command

    shutil.copy(saved, state)
    stopped = run_cli("stop", cwd=tmp_path, timeout=60)
    assert stopped.returncode == 0 and expected in stopped.stderr and "removed the stale state file" in stopped.stderr
    assert not state.exists()

    shutil.copy(saved, state)
    proc, again = start_foreground(tmp_path)
    try:
        assert again["pid"] != info["pid"]
    finally:
        _, stderr = interrupt(proc)
    assert proc.returncode == 0, stderr
    assert f"(pid {info['pid']}, http" in stderr and "removed the stale state file" in stderr


def test_stop_after_kill_9_ends_the_dead_servers_stubs_at_once(tmp_path: Path) -> None:
    """The stubs are frozen (SIGSTOP) so they cannot exit on their own within the seconds they take after their
    server dies: only `tritonkit stop` can end them, and the check right after it returns cannot race them."""
    _write_python_model(tmp_path / "model_repository", "double")
    started = run_cli("serve", "--background", "--json", cwd=tmp_path, timeout=180)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    stubs = descendants(info["pid"])
    assert stubs, "the server started no Python-backend stub"
    try:
        for pid in stubs:
            os.kill(pid, signal.SIGSTOP)
        os.kill(info["pid"], signal.SIGKILL)
        assert wait_gone([info["pid"]]) == []
        stopped = run_cli("stop", "--json", cwd=tmp_path, timeout=60)
        left = alive(stubs)
    finally:
        for pid in alive(stubs):
            os.kill(pid, signal.SIGKILL)
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["stale"] is True
    assert left == [], f"stubs {left} of the killed server outlived tritonkit stop"
    assert not (tmp_path / ".tritonkit" / "server.json").exists()
