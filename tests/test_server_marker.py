"""The check behind `pytest -m "not server"`: a test that starts a tritonserver without the mark fails, in one line.

A stand-in tritonserver (`sleep` run under that name, as the process table shows it) in an inner pytest session."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow  # an inner pytest session: seconds

INNER = '''
import subprocess, time
import pytest

@pytest.fixture
def server(tmp_path):
    (tmp_path / "tritonserver").symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(tmp_path / "tritonserver"), "60"])
    while not open(f"/proc/{proc.pid}/cmdline", "rb").read():  # exec'd (a real server is waited for too)
        time.sleep(0.01)
    yield proc
    proc.kill()
    proc.wait()

def test_unmarked_fixture(server):
    pass

def test_unmarked_started_and_stopped(tmp_path):
    (tmp_path / "tritonserver").symlink_to("/bin/sleep")
    subprocess.run([str(tmp_path / "tritonserver"), "1.2"], check=True)

@pytest.mark.server
def test_marked(server):
    pass

def test_unmarked_plain():
    time.sleep(0.6)
'''


def test_an_unmarked_test_that_starts_triton_fails(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "400"}  # summary lines in full
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "tests.server_marker", "-p",
                          "no:cacheprovider",
                          "--rootdir", str(tmp_path), "-o", "markers=server", str(tmp_path / "test_inner.py")],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    errors = {
        line.split("::")[1].split()[0]: line for line in run.stdout.splitlines() if line.startswith(("ERROR", "FAILED"))
    }
    assert sorted(errors) == ["test_unmarked_fixture", "test_unmarked_started_and_stopped"], run.stdout
    for line in errors.values():
        assert line.startswith("ERROR") and "starts Triton (tritonserver pid " in line, line
        assert "has no @pytest.mark.server" in line
    assert "4 passed, 2 errors" in run.stdout, run.stdout  # the calls pass; their teardown reports the missing mark
