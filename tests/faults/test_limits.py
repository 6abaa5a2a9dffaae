"""`deploy.limits.max_queue_size`: the built repository bounds every dynamically batched model's queue (unless
the model names its own bound), and the served deployment refuses the request that finds the queue full with
Triton's message, over HTTP and gRPC, while every accepted request still gets its answer."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc
from tritonclient.utils import InferenceServerException

from tests.conftest import require, run_cli
from tritonkit.spec.loader import load_project

#: One request at a time, each holding the one instance for 0.4 s.
SLOW = '''
import time
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        time.sleep(0.4)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("Y", pb_utils.get_input_tensor_by_name(r, "X").as_numpy())])
                for r in requests]
'''

SPEC = """\
version: 1
deploy:
  limits: {max_queue_size: 2}
models:
  slow: &slow
    backend: python
    max_batch_size: 1
    input: [{name: X, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: Y, data_type: TYPE_FP32, dims: [4]}]
    dynamic_batching: {}
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: slow.py}
  own_bound:
    <<: *slow
    dynamic_batching: {default_queue_policy: {max_queue_size: 7}}
  with_timeout:
    <<: *slow
    dynamic_batching: {default_queue_policy: {default_timeout_microseconds: 900000}}
  unbatched:
    backend: python
    max_batch_size: 1
    input: [{name: X, data_type: TYPE_FP32, dims: [4]}]
    output: [{name: Y, data_type: TYPE_FP32, dims: [4]}]
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: slow.py}
"""
FLOOD = 10


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "slow.py").write_text(SLOW)
    (root / "tritonkit.yaml").write_text(SPEC)
    return root / "tritonkit.yaml"


def test_limits_apply_where_the_model_sets_no_bound(tmp_path: Path) -> None:
    models = load_project(_project(tmp_path)).models
    policy = {
        name: m.dynamic_batching.default_queue_policy if m.dynamic_batching else None for name, m in models.items()
    }
    assert policy["slow"] is not None and policy["slow"].max_queue_size == 2
    assert policy["own_bound"] is not None and policy["own_bound"].max_queue_size == 7
    assert policy["with_timeout"] is not None
    assert (policy["with_timeout"].max_queue_size, policy["with_timeout"].default_timeout_microseconds) == (2, 900000)
    assert policy["unbatched"] is None  # no dynamic batcher: Triton 2.51 has no queue bound to set


@pytest.mark.slow  # a build in a child process: seconds
def test_a_negative_limit_is_one_line(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    spec.write_text(SPEC.replace("max_queue_size: 2", "max_queue_size: -1"))
    done = run_cli("build", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "deploy.limits.max_queue_size" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "model_repository").exists()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
    from tritonkit.serve.server import EmbeddedServer

    root = tmp_path_factory.mktemp("limits")
    _project(root)
    done = run_cli("build", cwd=root)
    assert done.returncode == 0, done.stderr
    with EmbeddedServer(root / "model_repository", work_dir=root / ".tritonkit") as server:
        yield server


def _flood(call) -> tuple[list[np.ndarray], list[str]]:
    """FLOOD requests at once; (answers, errors)."""
    answers: list[np.ndarray] = []
    errors: list[str] = []
    start = threading.Barrier(FLOOD)

    def one(i: int) -> None:
        x = np.full((1, 4), float(i), np.float32)
        start.wait()
        try:
            y = call(x)
            np.testing.assert_array_equal(y, x)  # an accepted request gets its own answer
            answers.append(y)
        except InferenceServerException as exc:
            errors.append(exc.message())

    threads = [threading.Thread(target=one, args=(i,)) for i in range(FLOOD)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a request hung"
    return answers, errors


def _check(answers: list[np.ndarray], errors: list[str]) -> None:
    assert len(answers) + len(errors) == FLOOD
    # at most one running + two queued at any moment (two when the flood lands before the first is dequeued)
    assert errors and all("Exceeds maximum queue size" in e for e in errors), errors
    assert 2 <= len(answers) <= 3 + 2, answers  # a few more only if some ran before the others arrived


@pytest.mark.server
def test_built_config_and_served_refusal_over_http(served) -> None:
    config = text_format.Parse((served.repository / "slow" / "config.pbtxt").read_text(), mc.ModelConfig())
    assert config.dynamic_batching.default_queue_policy.max_queue_size == 2
    # the HTTP client is gevent-based and must stay in one thread: its own pool sends the flood (async_infer)
    client = httpclient.InferenceServerClient(served.http_url, concurrency=FLOOD, network_timeout=60)
    sent = []
    for i in range(FLOOD):
        inp = httpclient.InferInput("X", [1, 4], "FP32")
        inp.set_data_from_numpy(np.full((1, 4), float(i), np.float32))
        sent.append((i, client.async_infer("slow", [inp])))
    answers: list[np.ndarray] = []
    errors: list[str] = []
    try:
        for i, pending in sent:
            try:
                y = pending.get_result().as_numpy("Y")
            except InferenceServerException as exc:
                errors.append(exc.message())
                continue
            np.testing.assert_array_equal(y, np.full((1, 4), float(i), np.float32))  # its own answer
            answers.append(y)
    finally:
        client.close()
    _check(answers, errors)


@pytest.mark.server
def test_served_refusal_over_grpc_and_the_model_answers_after(served) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)

    def call(x: np.ndarray) -> np.ndarray:
        inp = grpcclient.InferInput("X", [1, 4], "FP32")
        inp.set_data_from_numpy(x)
        return client.infer("slow", [inp], client_timeout=60).as_numpy("Y")

    try:
        _check(*_flood(call))
        np.testing.assert_array_equal(call(np.ones((1, 4), np.float32)), 1)  # the flood is over: accepted again
    finally:
        client.close()
