"""The BLS example on the real embedded Triton: smoke green over HTTP and gRPC, callee errors and timeouts.

One server for the module: the example project (`examples/bls`) plus two test models for the timeout.
"""
from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import yaml

from tests.conftest import REPO_ROOT, run_cli
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server

HERE = Path(__file__).parent
SCALAR = {"data_type": "TYPE_FP32", "dims": [1]}
TEST_MODELS = {
    "sleepy": {
        "backend": "python",
        "max_batch_size": 1,
        "dynamic_batching": {
            "default_queue_policy": {"default_timeout_microseconds": 60_000_000, "allow_timeout_override": True}
        },
        "input": [{"name": "SECONDS", **SCALAR}],
        "output": [{"name": "SECONDS", **SCALAR}],
        "instance_group": [{"kind": "KIND_CPU", "count": 1}],
        "files": {"model.py": "models/sleepy.py"},
    },
    "impatient": {
        "backend": "python",
        "max_batch_size": 0,
        "bls": {"calls": ["sleepy"]},
        "input": [{"name": "SECONDS", **SCALAR}, {"name": "TIMEOUT_S", **SCALAR}],
        "output": [{"name": "SECONDS", **SCALAR}],
        "instance_group": [{"kind": "KIND_CPU", "count": 2}],
        "files": {"model.py": "models/impatient.py", "bls_runtime": "tritonkit:pipelines/bls/runtime"},
        "smoke": [{"inputs": {"SECONDS": [0.0], "TIMEOUT_S": [5.0]}, "outputs": {"SECONDS": [0.0]}}],
    },
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("bls")
    spec = yaml.safe_load((REPO_ROOT / "examples" / "bls" / "tritonkit.yaml").read_text())
    (project / "tritonkit.yaml").write_text(yaml.safe_dump({**spec, "models": TEST_MODELS}, sort_keys=False))
    shutil.copytree(HERE / "models", project / "models")
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    repository = project / "model_repository"
    with EmbeddedServer(repository, work_dir=project / ".tritonkit") as server:
        yield server, repository


def scalar_inputs(module, **values: np.ndarray) -> list:
    inputs = []
    for name, value in values.items():
        tensor = module.InferInput(name, list(value.shape), "FP32" if value.dtype == np.float32 else "INT32")
        tensor.set_data_from_numpy(value)
        inputs.append(tensor)
    return inputs


def test_smoke_is_green_over_http_and_grpc(served) -> None:
    server, repository = served
    result = run_cli("smoke", "-r", str(repository), "--url", server.http_url, "--grpc-url", server.grpc_url, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["ok"], [r for r in report["results"] if r["status"] != "pass"]
    rows = {(r["check"], r["model"], r["protocol"]): r for r in report["results"]}
    for protocol in ("http", "grpc"):
        assert rows[("callees-ready", "route", protocol)]["detail"] == "calls double, negate: ready"
        for check, model in (("request:case000", "route"), ("request:case001", "route"), ("request:case000", "shrink"),
                             ("stream:case000", "total"), ("stream:case000", "count")):
            assert rows[(check, model, protocol)]["status"] == "pass"
        order = [r["model"] for r in report["results"] if r["protocol"] == protocol and r["check"] == "ready"]
        assert order.index("double") < order.index("route") and order.index("halve") < order.index("shrink")
        assert order.index("count") < order.index("total") and order.index("sleepy") < order.index("impatient")


@pytest.mark.parametrize("module", [httpclient, grpcclient], ids=["http", "grpc"])
def test_callee_error_reaches_the_client_naming_the_callee(served, module) -> None:
    server, _ = served
    client = module.InferenceServerClient(server.http_url if module is httpclient else server.grpc_url)
    inputs = scalar_inputs(module, X=np.array([np.inf], np.float32), MODE=np.array([0], np.int32))
    with pytest.raises(Exception, match="model 'double' called by 'route' failed: X must be finite"):
        client.infer("route", inputs)
    bad_mode = scalar_inputs(module, X=np.array([2.0], np.float32), MODE=np.array([7], np.int32))
    with pytest.raises(Exception, match=r"(400|INVALID_ARGUMENT).*MODE must be one of \[0, 1\], got 7"):
        client.infer("route", bad_mode)
    good = client.infer("route", scalar_inputs(module, X=np.array([2.0], np.float32), MODE=np.array([1], np.int32)))
    np.testing.assert_array_equal(good.as_numpy("Y"), [-2.0])


def test_call_timeout_fails_fast_naming_the_callee(served) -> None:
    server, _ = served
    client = httpclient.InferenceServerClient(server.http_url)
    sleeper = grpcclient.InferenceServerClient(server.grpc_url)   # the HTTP client is not shared across threads
    busy = threading.Thread(target=sleeper.infer,
                            args=("sleepy", scalar_inputs(grpcclient, SECONDS=np.array([[2.0]], np.float32))))
    busy.start()   # the only instance of `sleepy` is now busy for 2 s; the next request waits in its queue
    time.sleep(0.3)
    started = time.monotonic()
    try:
        with pytest.raises(Exception, match="model 'sleepy' called by 'impatient' failed: .*timeout") as err:
            client.infer("impatient",
                         scalar_inputs(httpclient, SECONDS=np.array([0.0], np.float32),
                                       TIMEOUT_S=np.array([0.2], np.float32)))
        waited = time.monotonic() - started
    finally:
        busy.join()
    assert waited < 1.2, f"the caller waited {waited:.2f} s for a 0.2 s timeout ({err.value})"
    ok = client.infer("impatient",
                      scalar_inputs(httpclient, SECONDS=np.array([0.05], np.float32),
                                    TIMEOUT_S=np.array([5.0], np.float32)))
    np.testing.assert_allclose(ok.as_numpy("SECONDS"), [0.05])
