"""Models that fail: `initialize` raises, `execute` raises on some inputs, requests exceed a queue timeout.

Each gives a clear per-request (or per-model) error while the other models keep answering.
"Exceeds a timeout" in Triton terms: `dynamic_batching.default_queue_policy` with `timeout_action: REJECT`
refuses a request still queued after `default_timeout_microseconds`; a client-side deadline (gRPC
`client_timeout`) ends the call on the client whatever the model does.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from tests.conftest import require, run_cli
from tests.faults.conftest import SLEEP_MODEL, infer, psutil
from tests.serve.conftest import _write_python_model
from tritonkit.serve.server import EmbeddedServer

require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")

pytestmark = [pytest.mark.server, pytest.mark.slow]

PICKY_MODEL = '''
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            if (x < 0).any():
                raise ValueError(f"negative input {x.min()} is not allowed")
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", x)]))
        return out
'''
INIT_RAISES = '''
class TritonPythonModel:
    def initialize(self, args):
        raise RuntimeError("tokenizer.json is corrupt")
'''
QUEUE_TIMEOUT = ("dynamic_batching { default_queue_policy { timeout_action: REJECT "
                 "default_timeout_microseconds: 300000 } }")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    root = tmp_path_factory.mktemp("faults")
    repo = root / "model_repository"
    _write_python_model(repo, "double")
    _write_python_model(repo, "picky", PICKY_MODEL, extra_config="")
    _write_python_model(repo, "slow", SLEEP_MODEL, extra_config=QUEUE_TIMEOUT)
    with EmbeddedServer(repo, work_dir=root / ".tritonkit") as started:
        yield started


def test_execute_raising_fails_only_those_requests(server: EmbeddedServer) -> None:
    with pytest.raises(InferenceServerException, match="negative input -1.0 is not allowed"):
        infer(server.http_url, "picky", np.array([[1, -1, 2, 3]], np.float32))
    np.testing.assert_array_equal(infer(server.http_url, "picky", np.ones((1, 4), np.float32)), 1)
    np.testing.assert_array_equal(infer(server.http_url, "double", np.ones((1, 4), np.float32)), 2)
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        inp = grpcclient.InferInput("X", [1, 4], "FP32")
        inp.set_data_from_numpy(np.full((1, 4), -3, np.float32))
        with pytest.raises(InferenceServerException, match="negative input -3.0"):
            client.infer("picky", [inp], client_timeout=30)
    finally:
        client.close()


def test_a_request_queued_past_the_timeout_is_refused_and_others_answer(server: EmbeddedServer) -> None:
    busy = threading.Thread(target=infer, args=(server.http_url, "slow", np.full((1, 4), 5.0, np.float32)))
    busy.start()  # holds the one instance for 5 s
    time.sleep(0.5)
    started = time.monotonic()
    with pytest.raises(InferenceServerException, match="(?i)timeout"):
        infer(server.http_url, "slow", np.ones((1, 4), np.float32))
    assert time.monotonic() - started < 4.5  # refused from the queue, not after the busy request
    ticked = time.monotonic()
    np.testing.assert_array_equal(infer(server.http_url, "double", np.ones((1, 4), np.float32)), 2)
    assert time.monotonic() - ticked < 2
    busy.join(30)
    assert not busy.is_alive()


def test_a_client_deadline_ends_a_slow_call_without_hanging(server: EmbeddedServer) -> None:
    client = grpcclient.InferenceServerClient(server.grpc_url)
    try:
        inp = grpcclient.InferInput("X", [1, 4], "FP32")
        inp.set_data_from_numpy(np.full((1, 4), 6.0, np.float32))
        started = time.monotonic()
        with pytest.raises(InferenceServerException, match="Deadline Exceeded"):
            client.infer("slow", [inp], client_timeout=1.0)
        assert time.monotonic() - started < 3
    finally:
        client.close()
    np.testing.assert_array_equal(infer(server.http_url, "double", np.ones((1, 4), np.float32)), 2)


def test_initialize_raising_names_the_model_and_reason_and_leaves_no_server(tmp_path: Path) -> None:
    """`tritonkit serve` refuses a repository with a model that cannot load (one line per model, exit 2)."""
    _write_python_model(tmp_path / "model_repository", "double")
    _write_python_model(tmp_path / "model_repository", "broken", INIT_RAISES)
    result = run_cli("serve", "--background", cwd=tmp_path, timeout=180)
    assert result.returncode == 2
    line = [ln for ln in result.stderr.splitlines() if "broken" in ln]
    assert len(line) == 1 and "model 'broken' version 1 failed to load" in line[0]
    assert "RuntimeError: tokenizer.json is corrupt" in line[0]
    assert "double" not in result.stderr
    assert not (tmp_path / ".tritonkit" / "server.json").exists()
    serving = str(tmp_path / ".tritonkit" / "serving")
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if any(serving in a for a in p.info["cmdline"] or [])]
    assert left == [], "the server or its stubs were left running"
