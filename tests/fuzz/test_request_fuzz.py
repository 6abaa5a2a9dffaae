"""Fuzzed requests to the embedded Triton serving the example project's Python models and its ensemble.

Random shapes, dtypes and sizes, wrong and missing names, malformed JSON, binary bodies whose
`Inference-Header-Content-Length` lies, over raw HTTP (`http.client`), and gRPC requests with wrong types
and raw contents of the wrong length. After every example the server is live and ready; every
GOLDEN_EVERY examples, and at the end, the ensemble's smoke case still gets its known answer and every
Python-backend stub is the same process as at the start (a stub that died or restarted is a finding).
"""
from __future__ import annotations

import http.client
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import grpc
import numpy as np
import pytest
import tritonclient.http as httpclient
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from tritonclient.grpc import service_pb2, service_pb2_grpc

from tests.cli.cli_contract import run_in_process
from tests.conftest import REPO_ROOT
from tritonkit.serve.server import EmbeddedServer
from tritonkit.serve.stubs import stub_pids

from .budget import fuzz_settings

pytestmark = pytest.mark.server

GOLDEN_EVERY = 10
#: a request that has not answered by then hangs: the test fails rather than wait
TIMEOUT_S = 20.0
MODELS = {   # the example's models without `mlp` (its build exports with torch): name -> {input: (dtype, dims)}
    "preprocess": {"RAW": ("FP32", [4])},
    "classifier": {"FEATURES": ("FP32", [4])},
    "classify": {"RAW": ("FP32", [4])},
    "accumulator": {"VALUE": ("INT32", [1])},
    "countdown": {"N": ("INT32", [1])},
}
COUNTDOWN_MAX = 1000   # models/countdown.py refuses a larger N
DTYPES = ["BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64", "FP16", "FP32", "FP64",
          "BYTES", "BF16"]


@dataclass
class Served:
    """The running server, its stubs at start, the golden case and how many examples have run."""

    server: EmbeddedServer
    stubs: dict[int, str]
    golden_inputs: dict[str, np.ndarray]
    golden_outputs: dict[str, np.ndarray]
    atol: float
    examples: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    project = tmp_path_factory.mktemp("request-fuzz") / "project"
    (project / "ensembles").mkdir(parents=True)
    spec = yaml.safe_load((REPO_ROOT / "tritonkit.yaml").read_text(encoding="utf-8"))
    del spec["models"]["mlp"]
    (project / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    shutil.copy(REPO_ROOT / "ensembles" / "classify.yaml", project / "ensembles")
    shutil.copytree(REPO_ROOT / "models", project / "models", ignore=shutil.ignore_patterns("__pycache__"))
    built = run_in_process(["build"], project)
    assert built.exit_code == 0, built.stderr
    case = yaml.safe_load((project / "ensembles" / "classify.yaml").read_text(encoding="utf-8"))["models"]["classify"][
        "smoke"
    ][0]
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit") as server:
        yield Served(server, stub_pids(server.pid),
                     {k: np.array(v, dtype=np.float32) for k, v in case["inputs"].items()},
                     {k: np.array(v, dtype=np.float32) for k, v in case["outputs"].items()}, float(case["atol"]))


def assert_healthy(served: Served, golden: bool) -> None:
    """Live and ready now; with `golden`, the ensemble answers right and no stub has changed."""
    served.server.check()
    conn = http.client.HTTPConnection(*served.server.http_url.split(":"), timeout=TIMEOUT_S)
    try:
        for path in ("/v2/health/live", "/v2/health/ready"):
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            assert response.status == 200, f"{path}: {response.status} after {served.examples} fuzzed requests"
    finally:
        conn.close()
    if not golden:
        return
    client = httpclient.InferenceServerClient(served.server.http_url, network_timeout=TIMEOUT_S)
    inputs = []
    for name, value in served.golden_inputs.items():
        tensor = httpclient.InferInput(name, list(value.shape), "FP32")
        tensor.set_data_from_numpy(value)
        inputs.append(tensor)
    result = client.infer("classify", inputs)
    for name, want in served.golden_outputs.items():
        np.testing.assert_allclose(result.as_numpy(name), want, atol=served.atol)
    assert stub_pids(served.server.pid) == served.stubs, "a Python-backend stub died or was restarted"


def after_example(served: Served) -> None:
    served.examples += 1
    assert_healthy(served, golden=served.examples % GOLDEN_EVERY == 0)


# -- raw HTTP ----------------------------------------------------------------------------------------
#: mostly the served models; unknown names only need a few spellings (they all end at Triton's lookup)
MODEL_NAMES = st.sampled_from(sorted(MODELS) * 4 + ["x" * 5000, "", "..", "classify/../preprocess", "名前", "mlp"])
TENSOR_NAMES = st.one_of(st.sampled_from(["RAW", "FEATURES", "VALUE", "N", "START", "CORRID", "PROBS"]),
                         st.text(max_size=20))
SHAPES = st.lists(st.one_of(st.integers(-2, 8), st.sampled_from([0, 2**31, 2**63 - 1, 2**64, -(2**63)])), max_size=5)
NUMBERS = st.one_of(st.integers(-(2**64), 2**64), st.floats(), st.booleans(), st.text(max_size=5), st.none())


@st.composite
def json_tensor(draw: st.DrawFn, model: str) -> dict[str, Any]:
    """One input tensor: usually the model's own name, dtype and a fitting shape, then bent."""
    own = MODELS.get(model, {})
    name = draw(st.one_of(st.sampled_from(sorted(own)), TENSOR_NAMES) if own else TENSOR_NAMES)
    dtype, dims = own.get(name, ("FP32", [4]))
    shape = draw(st.one_of(st.just([draw(st.integers(0, 8)), *dims]), st.just(list(dims)), SHAPES))
    count = int(np.prod([max(d, 0) for d in shape])) if all(isinstance(d, int) and 0 <= d < 2**20 for d in shape) else 1
    count = min(count, 4096)
    data: Any = draw(st.one_of(st.lists(st.floats(-1e6, 1e6) if dtype == "FP32" else st.integers(-100, 100),
                                        min_size=count, max_size=count),
                               st.lists(NUMBERS, max_size=8), NUMBERS, st.recursive(NUMBERS, st.lists, max_leaves=8)))
    tensor = {"name": name, "shape": shape,
              "datatype": draw(st.one_of(st.just(dtype), st.sampled_from(DTYPES), st.text(max_size=6))), "data": data}
    for key in draw(
        st.sets(st.sampled_from(["name", "shape", "datatype", "data"]), max_size=1)
    ):  # sometimes a key is missing
        del tensor[key]
    return tensor


@st.composite
def http_requests(draw: st.DrawFn) -> tuple[str, dict[str, str], bytes]:
    """(path, headers, body) of one POST to the inference endpoint, valid or not."""
    model = draw(MODEL_NAMES)
    path = f"/v2/models/{quote(model, safe='')}/infer"
    kind = draw(st.sampled_from(["valid", "valid", "json", "json", "garbage", "truncated", "binary", "binary"]))
    header: dict[str, Any] = {"inputs": draw(st.lists(json_tensor(model), max_size=3))}
    if kind == "valid" and model in MODELS:   # the model's own inputs, any batch size (up to past the max) and values
        batch = draw(st.integers(1, 20))
        header = {
            "inputs": [
                {
                    "name": n,
                    "datatype": dt,
                    "shape": [batch, *dims],
                    "data": draw(
                        st.lists(
                            st.floats(width=32) if dt == "FP32" else st.integers(-(2**31), 2**31 - 1),
                            min_size=batch * dims[0],
                            max_size=batch * dims[0],
                        )
                    ),
                }
                for n, (dt, dims) in MODELS[model].items()
            ]
        }
        if model == "accumulator":
            header["parameters"] = {"sequence_id": draw(st.integers(1, 2**63)), "sequence_start": draw(st.booleans()),
                                    "sequence_end": True}
    if draw(st.booleans()):
        header["parameters"] = draw(
            st.dictionaries(
                st.sampled_from(
                    ["sequence_id", "sequence_start", "sequence_end", "binary_data_output", "priority", "timeout"]
                ),
                NUMBERS,
                max_size=3,
            )
        )
    if draw(st.booleans()):
        header["outputs"] = [{"name": draw(TENSOR_NAMES), "parameters": {"binary_data": draw(st.booleans())}}]
    text = json.dumps(header).encode()
    headers = {"Content-Type": "application/json"}
    if kind == "garbage":
        text = draw(st.binary(max_size=200))
    elif kind == "truncated":
        text = text[: draw(st.integers(0, max(0, len(text) - 1)))]
    elif kind == "binary":
        for tensor in header["inputs"]:   # the data moves to the binary section, and the sizes may lie
            tensor.pop("data", None)
            tensor["parameters"] = {"binary_data_size": draw(st.one_of(st.integers(-8, 4096), st.just(2**63)))}
        text = json.dumps(header).encode()
        blob = draw(st.binary(max_size=4096))
        declared = draw(st.one_of(st.just(len(text)), st.integers(-10, len(text) + len(blob) + 10),
                                  st.sampled_from(["abc", "", "1e3", str(2**64)])))
        headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(declared)}
        text += blob
    return path, headers, text


def post(served: Served, path: str, headers: dict[str, str], body: bytes) -> int:
    """The response status (0 when the server closed the connection without one, which is allowed)."""
    conn = http.client.HTTPConnection(*served.server.http_url.split(":"), timeout=TIMEOUT_S)
    try:
        conn.request("POST", path, body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    except (ConnectionError, http.client.BadStatusLine):
        return 0
    finally:
        conn.close()


@fuzz_settings(400)
@given(request=http_requests())
@example(request=("/v2/models/classify/infer",
                  {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": "999999"},
                  b'{"inputs": []}'))
@example(request=("/v2/models/classify/infer",
                  {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": "-5"},
                  b'{"inputs": []}'))
@example(request=("/v2/models/countdown/infer", {"Content-Type": "application/json"},
                  b'{"inputs": [{"name": "N", "shape": [1], "datatype": "INT32", "data": [2147483647]}]}'))
def test_http_requests_never_hurt_the_server(served: Served, request: tuple[str, dict[str, str], bytes]) -> None:
    status = post(served, *request)
    served.statuses[status] = served.statuses.get(status, 0) + 1
    assert status != 200 or request[0].endswith(
        ("/preprocess/infer", "/classifier/infer", "/classify/infer", "/accumulator/infer")
    )
    after_example(served)


def test_a_body_shorter_than_its_content_length(served: Served) -> None:
    """A client that promises 64 MiB and sends 10 bytes, then hangs up: the server neither waits forever nor dies."""
    conn = http.client.HTTPConnection(*served.server.http_url.split(":"), timeout=TIMEOUT_S)
    conn.putrequest("POST", "/v2/models/classify/infer")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(64 * 2**20))
    conn.endheaders(b'{"inputs":')
    conn.close()
    assert_healthy(served, golden=True)


# -- gRPC --------------------------------------------------------------------------------------------
@st.composite
def grpc_requests(draw: st.DrawFn) -> service_pb2.ModelInferRequest:
    """A ModelInferRequest whose declared types, shapes and raw content lengths need not agree."""
    model = draw(MODEL_NAMES)
    request = service_pb2.ModelInferRequest(model_name=model)
    own = MODELS.get(model, {"RAW": ("FP32", [4])})
    raw = draw(st.booleans())
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.one_of(st.sampled_from(sorted(own)), TENSOR_NAMES))
        tensor = request.inputs.add(name=name, datatype=draw(st.one_of(st.sampled_from(DTYPES), st.text(max_size=6))))
        tensor.shape.extend(draw(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-1, 8), max_size=4)))
        if raw:
            request.raw_input_contents.append(draw(st.binary(max_size=2048)))
        else:
            typed = draw(st.sampled_from(["fp32_contents", "int_contents", "int64_contents", "bytes_contents",
                                          "bool_contents", "uint64_contents"]))
            values = {"fp32_contents": st.floats(width=32), "int_contents": st.integers(-(2**31), 2**31 - 1),
                      "int64_contents": st.integers(-(2**63), 2**63 - 1),
                      "bytes_contents": st.binary(max_size=16), "bool_contents": st.booleans(),
                      "uint64_contents": st.integers(0, 2**64 - 1)}[typed]
            getattr(tensor.contents, typed).extend(draw(st.lists(values, max_size=64)))
    if draw(st.booleans()):
        request.parameters["sequence_id"].int64_param = draw(st.integers(-(2**63), 2**63 - 1))
        request.parameters["sequence_start"].bool_param = draw(st.booleans())
    return request


@pytest.fixture(scope="module")
def grpc_stub(served: Served) -> Iterator[service_pb2_grpc.GRPCInferenceServiceStub]:
    with grpc.insecure_channel(served.server.grpc_url) as channel:
        yield service_pb2_grpc.GRPCInferenceServiceStub(channel)


@fuzz_settings(400)
@given(request=grpc_requests())
def test_grpc_requests_with_wrong_types_never_hurt_the_server(
    served: Served, grpc_stub: service_pb2_grpc.GRPCInferenceServiceStub, request: service_pb2.ModelInferRequest
) -> None:
    try:
        grpc_stub.ModelInfer(request, timeout=TIMEOUT_S)
    except grpc.RpcError as exc:
        assert exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED, f"request hung: {request}"
    after_example(served)


def test_a_64_mib_body(served: Served) -> None:
    """64 MiB + 1 of whitespace: Triton 2.51 reads it whole (measured: 500, 'The document is empty'); nothing breaks."""
    conn = http.client.HTTPConnection(*served.server.http_url.split(":"), timeout=TIMEOUT_S)
    try:
        conn.request("POST", "/v2/models/classify/infer", body=b" " * (64 * 2**20 + 1),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status >= 400, response.read()[:200]
    except ConnectionError:
        pass   # closing the connection is a refusal too
    finally:
        conn.close()
    assert_healthy(served, golden=True)


@fuzz_settings(30)
@given(n=st.one_of(st.integers(-10, 20), st.integers(-(2**31), 2**31 - 1)))
@example(n=2**31 - 1)
def test_countdown_streams_any_n_and_ends(served: Served, n: int) -> None:
    """The decoupled example streams N..1 for a small N and refuses a huge one with an error, never streaming for hours.

    Was: N = 2**31 - 1 kept its stub sending for hours, so every later countdown request waited behind it."""
    import tritonclient.grpc as grpcclient

    results: list[Any] = []
    client = grpcclient.InferenceServerClient(served.server.grpc_url)
    client.start_stream(callback=lambda result, error: results.append(error or result))
    tensor = grpcclient.InferInput("N", [1], "INT32")
    tensor.set_data_from_numpy(np.array([n], dtype=np.int32))
    client.async_stream_infer("countdown", [tensor], enable_empty_final_response=True)
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline and not any(is_final(r) for r in results):
        time.sleep(0.01)
    client.stop_stream()
    client.close()
    assert any(is_final(r) for r in results), (
        f"countdown({n}) did not end within {TIMEOUT_S} s ({len(results)} responses)"
    )
    values = [
        int(r.as_numpy("OUT")[0]) for r in results if not isinstance(r, Exception) and r.as_numpy("OUT") is not None
    ]
    if 0 < n <= COUNTDOWN_MAX:
        assert values == list(range(n, 0, -1))
    elif n > COUNTDOWN_MAX:
        assert not values and any(isinstance(r, Exception) for r in results)
    after_example(served)


def is_final(result: Any) -> bool:
    """An error, or the response that carries the final flag."""
    return isinstance(result, Exception) or result.get_response().parameters["triton_final_response"].bool_param


def test_zz_still_golden_and_same_stubs_at_the_end(served: Served) -> None:
    """Runs last in this module (pytest keeps file order): the final check over everything sent."""
    assert_healthy(served, golden=True)
    assert served.stubs and set(served.stubs.values()) >= {"preprocess", "classifier", "accumulator", "countdown"}
    assert served.examples > 0 and {200, 400} <= set(served.statuses), (
        served.statuses
    )  # the fuzz ran, and reached the models
    print(f"request fuzz: {served.examples} examples, HTTP statuses {served.statuses}, stubs "
          f"{sorted(served.stubs.values())}")
