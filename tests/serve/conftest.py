"""Tiny model repositories written by the tests themselves, and one shared embedded server per session.

Every server a test starts is stopped by the test (or by this file's fixtures); starting as few as
possible keeps the suite inside CI's budget on 2 cores.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

DOUBLE_MODEL = '''
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", (x * 2).astype(np.float32))]))
        return out
'''


def _write_python_model(repo: Path, name: str, code: str = DOUBLE_MODEL, *, dims: int = 4,
                       extra_config: str = "dynamic_batching {}") -> Path:
    """A Python-backend model X[dims] -> Y[dims] (FP32) with the given model.py."""
    model = repo / name
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(textwrap.dedent(f"""\
        name: "{name}"
        backend: "python"
        max_batch_size: 8
        input [{{ name: "X" data_type: TYPE_FP32 dims: [{dims}] }}]
        output [{{ name: "Y" data_type: TYPE_FP32 dims: [{dims}] }}]
        instance_group [{{ kind: KIND_CPU count: 1 }}]
        {extra_config}
        """))
    (model / "1" / "model.py").write_text(textwrap.dedent(code))
    return model


def _build_onnx(path: Path, seed: int = 0) -> Path:
    """An ONNX model Y = tanh(X @ W + b) with a dynamic batch dimension, X[N,4] -> Y[N,3]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weights = rng.standard_normal((4, 3)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["H"]), helper.make_node("Add", ["H", "B"], ["Z"]),
         helper.make_node("Tanh", ["Z"], ["Y"])],
        "linear_tanh",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])],
        [numpy_helper.from_array(weights, "W"), numpy_helper.from_array(bias, "B")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _write_onnx_model(repo: Path, name: str, *, header: str = 'platform: "onnxruntime_onnx"',
                     queue_delay_us: int = 100_000, extra_files: dict[str, bytes] | None = None,
                     with_onnx: bool = True, batching: str | None = None) -> Path:
    """A model whose config names a non-Python backend, with its ONNX file (and e.g. a plan) in version 1."""
    model = repo / name
    (model / "1").mkdir(parents=True)
    if with_onnx:
        _build_onnx(model / "1" / "model.onnx")
    for file_name, data in (extra_files or {}).items():
        (model / "1" / file_name).write_bytes(data)
    (model / "config.pbtxt").write_text(textwrap.dedent(f"""\
        name: "{name}"
        {header}
        max_batch_size: 16
        input [{{ name: "X" data_type: TYPE_FP32 dims: [4] }}]
        output [{{ name: "Y" data_type: TYPE_FP32 dims: [3] }}]
        instance_group [{{ kind: KIND_GPU count: 1 gpus: [0] }}]
        {batching or f"dynamic_batching {{ max_queue_delay_microseconds: {queue_delay_us} }}"}
        """))
    return model


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:  # noqa: F821
    """One server for the read-only tests: a Python model, an ONNX model and a TensorRT model (both fallbacks)."""
    from tritonkit.serve.server import EmbeddedServer

    root = tmp_path_factory.mktemp("served")
    repo = root / "model_repository"
    _write_python_model(repo, "double")
    _write_onnx_model(repo, "linear")
    _write_onnx_model(repo, "linear_trt", header='platform: "tensorrt_plan"',
                     extra_files={"model.plan": b"not a real engine: the fallback runs model.onnx"})
    server = EmbeddedServer(repo, work_dir=root / ".tritonkit")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def tritonkit_cli(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """`python -m tritonkit ARGS` in `cwd`, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.fixture()
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    return tritonkit_cli


@pytest.fixture()
def write_python_model() -> Callable[..., Path]:
    return _write_python_model


@pytest.fixture()
def write_onnx_model() -> Callable[..., Path]:
    return _write_onnx_model


@pytest.fixture()
def build_onnx() -> Callable[..., Path]:
    return _build_onnx
