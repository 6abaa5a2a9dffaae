"""Helpers for the injected-fault tests: process trees, foreground servers, tiny Python models."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient

from tests.conftest import require

psutil = require("psutil", "pip install psutil")

# A shell without job control starts background jobs with SIGINT ignored, and an ignored signal stays ignored in
# every process started after it, so the commands under test would never see Ctrl-C. A terminal delivers it: give
# the commands started here what a terminal gives (a Python handler in this process is reset to the default at exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: X[0] seconds of sleep when X[0] >= 5 (smoke's generated inputs stay below), then Y = X.
SLEEP_MODEL = '''
import time
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            if x.flat[0] >= 5:
                time.sleep(float(x.flat[0]))
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x)]))
        return out
'''


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, grandchildren: servers, stubs, exporters)."""
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def alive(pids: list[int]) -> list[int]:
    """Those of `pids` still running (zombies count as gone)."""
    left = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.NoSuchProcess:
            pass
    return left


def wait_gone(pids: list[int], timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive(pids)


def start_foreground(project: Path, *args: str) -> tuple[subprocess.Popen, dict]:
    """`tritonkit serve --json ARGS` in `project`, returned once its JSON summary is printed (all models ready)."""
    proc = subprocess.Popen([sys.executable, "-m", "tritonkit", "serve", "--json", *args], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("}"):
            break
    if not lines:
        proc.kill()
        raise AssertionError(f"serve printed no summary: {proc.stderr.read() if proc.stderr else ''}")
    return proc, json.loads("".join(lines))


def interrupt(proc: subprocess.Popen, sig: int = signal.SIGINT, timeout: float = 60.0) -> tuple[str, str]:
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=timeout)
    finally:
        proc.kill()


def infer(url: str, model: str, x: np.ndarray, timeout: float = 30.0) -> np.ndarray:
    """One HTTP request with a client timeout, so a fault can never hang the test."""
    client = httpclient.InferenceServerClient(url, network_timeout=timeout, connection_timeout=timeout)
    try:
        inp = httpclient.InferInput("X", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        return client.infer(model, [inp]).as_numpy("Y")
    finally:
        client.close()


def eventually(check: Callable[[], object], timeout: float = 30.0) -> object:
    """`check()`'s first result that does not raise, within `timeout`; else the last error."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return check()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)
