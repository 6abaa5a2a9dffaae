"""`tritonkit build` exports `source:` models: configs from the graphs, cache on rebuild, failures refused whole."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest
import yaml
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.conftest import REPO_ROOT, run_cli

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

SPEC = """
version: 1
models:
  mlp:
    source: {python: examples.models.mlp:build}
    max_batch_size: 8
    dynamic_batching: {}
  tiny_gpt:
    source: {python: examples.models.tiny_gpt:build}
    export: {dynamic_axes: {input_ids: {1: seq}, past_key: {3: past}, past_value: {3: past}}}
    max_batch_size: 4
"""

WRONG = """
  wrong_branch:
    source: {python: examples.models.wrong_branch:build}
    max_batch_size: 4
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("build_export")
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tritonkit.yaml").write_text(SPEC)
    result = run_cli("build", "--json", cwd=root, timeout=900)
    assert result.returncode == 0, result.stderr
    (root / "first_build.json").write_text(result.stdout)
    return root


def config(project: Path, model: str) -> model_config_pb2.ModelConfig:
    return text_format.Parse((project / "model_repository" / model / "config.pbtxt").read_text(),
                             model_config_pb2.ModelConfig())


def graph_io(path: Path) -> dict[str, tuple[int, list]]:
    graph = onnx.load(str(path), load_external_data=False).graph
    out = {}
    for value in list(graph.input) + list(graph.output):
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in value.type.tensor_type.shape.dim]
        out[value.name] = (value.type.tensor_type.elem_type, dims)
    return out


@pytest.mark.parametrize("model", ["mlp", "tiny_gpt"])
def test_config_dims_come_from_the_graph(project: Path, model: str) -> None:
    c = config(project, model)
    assert c.backend == "onnxruntime"
    graph = graph_io(project / "model_repository" / model / "1" / "model.onnx")
    for tensor in list(c.input) + list(c.output):
        _, dims = graph[tensor.name]
        assert list(tensor.dims) == dims[1:], tensor.name  # batch axis dropped since max_batch_size > 0
    assert (project / "model_repository" / model / "golden" / "tolerance.json").is_file()
    assert run_cli("validate", "model_repository", cwd=project).returncode == 0


def test_kv_cache_inputs_and_outputs_reach_the_config(project: Path) -> None:
    c = config(project, "tiny_gpt")
    names = {t.name for t in c.input} | {t.name for t in c.output}
    assert {"past_key", "past_value", "present_key", "present_value"} <= names


def test_warm_rebuild_hits_the_cache(project: Path) -> None:
    first = json.loads((project / "first_build.json").read_text())
    assert not first["exports"]["mlp"]["cache_hit"]
    again = run_cli("build", "--json", cwd=project, timeout=900)
    assert again.returncode == 0, again.stderr
    assert all(e["cache_hit"] for e in json.loads(again.stdout)["exports"].values())


def test_wrong_export_fails_the_build_and_writes_nothing(project: Path) -> None:
    before = {p: p.read_bytes() for p in (project / "model_repository").rglob("*") if p.is_file()}
    spec = project / "tritonkit.yaml"
    spec.write_text(SPEC + WRONG)
    try:
        result = run_cli("build", cwd=project, timeout=900)
    finally:
        spec.write_text(SPEC)
    assert result.returncode == 2
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("tritonkit.yaml: models.wrong_branch.export.tolerance: ")
    assert "output 'output'" in line and "max abs error" in line
    assert "Traceback" not in result.stderr
    after = {p: p.read_bytes() for p in (project / "model_repository").rglob("*") if p.is_file()}
    assert after == before


def test_local_tensorrt_without_tensorrt_names_the_alternative(project: Path) -> None:
    spec = project / "tritonkit.yaml"
    spec.write_text(SPEC.replace("    dynamic_batching: {}",
                                 "    dynamic_batching: {}\n    export: {format: tensorrt}"))
    try:
        result = run_cli("build", cwd=project, timeout=900)
    finally:
        spec.write_text(SPEC)
    assert result.returncode == 2
    assert "mode: deferred" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_deferred_tensorrt_builds_engines_in_compose(project: Path) -> None:
    spec = project / "tritonkit.yaml"
    spec.write_text(SPEC.replace("    dynamic_batching: {}",
                                 "    dynamic_batching: {}\n    export: {format: tensorrt, tensorrt: {mode: deferred, "
                                 "fp16: true}}"))
    try:
        result = run_cli("build", cwd=project, timeout=900)
        assert result.returncode == 0, result.stderr
        compose = yaml.safe_load((project / "docker-compose.yml").read_text())["services"]
        builder = compose["tensorrt-engines"]
        assert "trtexec --onnx=model.onnx --saveEngine=model.plan" in builder["command"][-1]
        assert "--fp16" in builder["command"][-1] and "cd /models/mlp/1" in builder["command"][-1]
        assert compose["triton"]["depends_on"] == {"tensorrt-engines": {"condition": "service_completed_successfully"}}
        assert builder["user"] == compose["triton"]["user"] == "1000:1000"  # writes into the repository, never as root
        assert config(project, "mlp").backend == "tensorrt"
        assert (project / "model_repository" / "mlp" / "1" / "model.onnx").is_file()
        if shutil.which("docker-compose"):
            check = subprocess.run(["docker-compose", "-f", "docker-compose.yml", "config", "-q"], cwd=project,
                                   capture_output=True, text=True)
            assert check.returncode == 0, check.stderr
    finally:
        spec.write_text(SPEC)
