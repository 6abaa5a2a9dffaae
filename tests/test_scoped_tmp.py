"""tests/scoped_tmp.py: a fixture's mktemp folders are gone once its scope ends, a server-like fixture of the same
scope torn down first; session folders stay, also one a session's lazy factory made for a module fixture; a passed
test's tmp_path goes, a failed one's stays.

An inner pytest session over two modules, which write what they saw to a record file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.slow  # an inner pytest session: seconds

CONFTEST = '''
import json, os, pytest

def record(key, value):
    path = os.environ["RECORD"]
    seen = json.load(open(path)) if os.path.exists(path) else {}
    seen[key] = value
    json.dump(seen, open(path, "w"))

@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shared")
    record("shared", str(folder))
    return folder

@pytest.fixture(scope="session")
def lazy(tmp_path_factory):  # a session's lazy factory: what it makes stays the session's, whoever calls it
    return lambda: tmp_path_factory.mktemp("lazy")

@pytest.fixture(scope="module")
def made_lazily(lazy):
    folder = lazy()
    record("lazy", str(folder))
    return folder

@pytest.fixture(scope="module")
def stopper():
    started = []
    yield started.append
    for folder in started:  # as a server's stop reads its work folder: the scope's folders are still there
        record("stopped_with_folder", (folder / "log").read_text())

@pytest.fixture(scope="module")
def built(stopper, tmp_path_factory):
    folder = tmp_path_factory.mktemp("built")
    (folder / "log").write_text("running")
    stopper(folder)
    record("built", str(folder))
    return folder
'''

FIRST = '''
from conftest import record

def test_uses_the_build(built, shared, made_lazily):
    assert (built / "log").is_file() and shared.is_dir() and made_lazily.is_dir()

def test_passes(tmp_path):
    record("passed_tmp", str(tmp_path))

def test_fails(tmp_path):
    record("failed_tmp", str(tmp_path))
    assert False
'''

SECOND = '''
import json, os
from pathlib import Path

def test_after_the_first_module(shared):
    seen = json.load(open(os.environ["RECORD"]))
    assert not Path(seen["built"]).exists()
    assert not Path(seen["passed_tmp"]).exists()
    assert Path(seen["failed_tmp"]).is_dir()
    assert shared.is_dir() and Path(seen["lazy"]).is_dir()
'''


def test_a_fixtures_folders_go_when_its_scope_ends(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_first.py").write_text(FIRST)
    (tmp_path / "test_second.py").write_text(SECOND)
    record = tmp_path / "record.json"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "RECORD": str(record)}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.scoped_tmp", "-p", "no:cacheprovider",
                          "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "base"),
                          "-o", "tmp_path_retention_policy=failed", "test_first.py", "test_second.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "1 failed, 3 passed" in run.stdout, run.stdout + run.stderr
    seen = json.loads(record.read_text())
    assert seen["stopped_with_folder"] == "running"
    assert Path(seen["shared"]).is_dir()  # the session's folders stay until pytest's own cleanup
