"""Exports run in a child process: a crash or a hang is reported in one line with the log and a reproduce script."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tritonkit.export import ExportCrashed, ExportError

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

CRASH = '''
import os, signal
import torch

def build():
    print("building the crashing model", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
'''

HANG = '''
import time

def build():
    time.sleep(600)
'''

RAISE = '''
def build():
    raise RuntimeError("weights file is corrupt")
'''


def run(exporter, project: Path, module: str, **options):
    return exporter(module, {"python": f"{module}:build"}, options, 4, project_dir=project,
                    cache_dir=project / "cache")


def test_crash_is_reported_with_log_and_reproduce_script(exporter, write_module):
    project = write_module("crashy", CRASH)
    with pytest.raises(ExportCrashed) as info:
        run(exporter, project, "crashy")
    err = info.value
    line = err.line()
    assert "\n" not in line
    assert "export process of model 'crashy' was killed by SIGSEGV in stage 'load source'" in line
    assert err.log_path in line and err.reproduce_path in line
    log = Path(err.log_path).read_text()
    assert "[tritonkit export] load source" in log and "building the crashing model" in log
    replay = subprocess.run(["bash", err.reproduce_path], capture_output=True, text=True, timeout=120)
    assert replay.returncode in (-11, 139), replay  # the same crash, outside tritonkit's CLI
    assert "building the crashing model" in replay.stdout


def test_timeout_kills_the_child_and_says_where(exporter, write_module):
    project = write_module("hangs", HANG)
    started = time.monotonic()
    with pytest.raises(ExportCrashed) as info:
        run(exporter, project, "hangs", timeout_s=8)
    assert time.monotonic() - started < 30
    err = info.value
    assert err.field == "models.hangs.export.timeout_s"
    assert "timed out after 8 s in stage 'load source'" in err.line()
    assert Path(err.reproduce_path).is_file() and Path(err.log_path).is_file()


def test_exception_in_user_code_is_a_located_error(exporter, write_module):
    project = write_module("broken", RAISE)
    with pytest.raises(ExportError) as info:
        run(exporter, project, "broken")
    assert not isinstance(info.value, ExportCrashed)
    assert info.value.line() == ("tritonkit.yaml: models.broken.source.python: broken:build raised RuntimeError: "
                                 "weights file is corrupt; fix the entry point (the export log has the traceback)")
