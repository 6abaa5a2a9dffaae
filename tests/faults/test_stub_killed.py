"""A Python-backend stub killed mid-request: the request fails (never hangs), the model serves again, smoke says so.

Triton 2.51 does not restart a dead stub by itself (every later request fails with "Stub process ... is not
healthy"); the foreground `tritonkit serve` reloads the model (serve/stubs.py).
"""
from __future__ import annotations

import json
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.http as httpclient

from tests.conftest import require, run_cli
from tests.faults.conftest import SLEEP_MODEL, alive, descendants, infer, interrupt, psutil, start_foreground, wait_gone
from tests.serve.conftest import _write_python_model

require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")

pytestmark = [pytest.mark.server, pytest.mark.slow]


def _stub_of(server_pid: int, model: str) -> int:
    for pid in alive(descendants(server_pid)):
        try:
            args = psutil.Process(pid).cmdline()
        except psutil.Error:
            continue
        if args and args[0].endswith("triton_python_backend_stub") and f"/{model}/1/model.py" in args[1]:
            return pid
    raise AssertionError(f"no stub for {model}")


def _answer_once_reloaded(url: str, model: str, seconds: float = 30.0) -> np.ndarray | None:
    """The model's answer to ones, asked until it serves again ("not healthy" until the reload completes)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return infer(url, model, np.ones((1, 4), np.float32), timeout=10)
        except Exception:  # noqa: BLE001 - retried until the deadline
            time.sleep(0.5)
    return None


def test_killed_stub_fails_the_request_then_the_model_is_reloaded_and_smoke_shows_it(tmp_path: Path) -> None:
    _write_python_model(tmp_path / "model_repository", "victim", SLEEP_MODEL, extra_config="")
    _write_python_model(tmp_path / "model_repository", "double")
    proc, info = start_foreground(tmp_path)
    failed: AssertionError | None = None
    try:
        stub = _stub_of(info["pid"], "victim")
        outcome: dict[str, object] = {}

        def call() -> None:
            started = time.monotonic()
            try:
                outcome["answer"] = infer(info["http"], "victim", np.full((1, 4), 20.0, np.float32))
            except Exception as exc:  # noqa: BLE001 - the failure is the point
                outcome["error"] = str(exc) or type(exc).__name__
            outcome["seconds"] = time.monotonic() - started

        caller = threading.Thread(target=call)
        caller.start()
        time.sleep(1.0)  # the request is in the stub, sleeping
        psutil.Process(stub).send_signal(signal.SIGKILL)
        caller.join(30)
        assert not caller.is_alive(), "the in-flight request hung"
        assert "error" in outcome and outcome["seconds"] < 15, outcome  # failed, well before its 20 s sleep
        np.testing.assert_array_equal(infer(info["http"], "double", np.ones((1, 4), np.float32)), 2)

        answer = _answer_once_reloaded(info["http"], "victim")
        assert answer is not None, "the model never served again"
        np.testing.assert_array_equal(answer, 1)
        assert _stub_of(info["pid"], "victim") != stub

        smoke = run_cli("smoke", "--json", cwd=tmp_path, timeout=180)
        rows = json.loads(smoke.stdout)["results"]
        restart = [r for r in rows if r["check"] == "stub restart"]
        assert smoke.returncode == 0, smoke.stdout[-2000:]
        assert [r["model"] for r in restart] == ["victim"] and restart[0]["status"] == "pass"
        assert f"(pid {stub}) died" in restart[0]["detail"] and "model reloaded" in restart[0]["detail"]
        in_table = run_cli(
            "smoke", "--protocol", "http", "--verbose", cwd=tmp_path, timeout=180
        ).stdout  # the per-check table
        assert "stub restart" in in_table and f"stub of model 'victim' (pid {stub}) died" in in_table
    except AssertionError as failure:
        failed = failure
    finally:
        tree = descendants(proc.pid)
        _, stderr = interrupt(proc)
    assert failed is None, f"{failed}\nserve's stderr:\n{stderr[-3000:]}"  # what the watch said, if anything
    assert proc.returncode == 0, stderr
    assert f"warning: stub of model 'victim' (pid {stub}) died" in stderr
    assert wait_gone(tree) == [] and alive([info["pid"]]) == []


def test_stub_of_a_model_loaded_after_start_is_watched_too(tmp_path: Path) -> None:
    """A model (re)loaded through the repository API while serving, as `tritonkit rollout` does, gets a new stub:
    its death is healed like that of a stub present at start."""
    _write_python_model(tmp_path / "model_repository", "double")
    proc, info = start_foreground(tmp_path)
    try:
        first = _stub_of(info["pid"], "double")
        client = httpclient.InferenceServerClient(info["http"])
        client.unload_model("double")
        assert wait_gone([first]) == []
        client.load_model("double")
        second = _stub_of(info["pid"], "double")
        time.sleep(1.5)  # a few watch polls: the new stub is seen alive before it dies
        psutil.Process(second).send_signal(signal.SIGKILL)
        answer = _answer_once_reloaded(info["http"], "double")
        assert answer is not None, "the model loaded after start was not reloaded when its stub died"
        np.testing.assert_array_equal(answer, 2)
    finally:
        _, stderr = interrupt(proc)
    assert f"warning: stub of model 'double' (pid {second}) died" in stderr
