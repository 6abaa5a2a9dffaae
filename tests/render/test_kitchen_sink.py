"""Every config section the renderer knows, compared with golden config.pbtxt files."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.conftest import REPO_ROOT, run_cli

SINK = REPO_ROOT / "tests" / "data" / "kitchen_sink"
GOLDEN = SINK / "golden"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("sink") / "project"
    shutil.copytree(SINK, project, ignore=shutil.ignore_patterns("golden"))
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    return project


MODELS = ["ragged_onnx", "stateful_direct", "streaming_oldest", "warm", "pipeline"]


@pytest.mark.parametrize("model", MODELS)
def test_config_matches_golden(built: Path, model: str) -> None:
    produced = (built / "model_repository" / model / "config.pbtxt").read_text()
    golden = GOLDEN / model / "config.pbtxt"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(produced)
    assert produced == golden.read_text()


@pytest.mark.parametrize("model", MODELS)
def test_golden_parses_as_model_config(model: str) -> None:
    config = text_format.Parse((GOLDEN / model / "config.pbtxt").read_text(), model_config_pb2.ModelConfig())
    assert config.name == model


def test_sections_reach_the_protobuf() -> None:
    def load(name: str) -> model_config_pb2.ModelConfig:
        return text_format.Parse((GOLDEN / name / "config.pbtxt").read_text(), model_config_pb2.ModelConfig())

    ragged = load("ragged_onnx")
    assert ragged.input[0].allow_ragged_batch and load("warm").input[2].optional
    assert ragged.output[0].label_filename == "labels.txt"
    assert list(ragged.input[1].reshape.shape) == [48]
    assert ragged.batch_input[0].kind == model_config_pb2.BatchInput.BATCH_ACCUMULATED_ELEMENT_COUNT
    assert list(ragged.version_policy.specific.versions) == [1, 2]
    assert ragged.instance_group[0].rate_limiter.resources[1].__getattribute__("global")
    assert ragged.dynamic_batching.priority_queue_policy[2].max_queue_size == 8
    assert ragged.dynamic_batching.default_queue_policy.timeout_action == model_config_pb2.ModelQueuePolicy.DELAY
    assert (
        ragged.optimization.execution_accelerators.gpu_execution_accelerator[0].parameters["precision_mode"] == "FP16"
    )
    assert ragged.optimization.cuda.graphs and ragged.optimization.input_pinned_memory.enable
    assert ragged.response_cache.enable
    direct = load("stateful_direct")
    corrid = direct.sequence_batching.control_input[3].control[0]
    assert corrid.data_type == model_config_pb2.TYPE_UINT64
    assert list(direct.sequence_batching.control_input[0].control[0].int32_false_true) == [0, 1]
    assert direct.sequence_batching.state[0].initial_state[0].data_file == "initial_cache.bin"
    assert direct.parameters["EXECUTION_ENV_PATH"].string_value == "$$TRITON_MODEL_DIRECTORY/env.tar.gz"
    assert direct.parameters["note"].string_value == 'quotes " and \\ backslash, ünïcode'
    streaming = load("streaming_oldest")
    assert streaming.sequence_batching.iterative_sequence and streaming.model_transaction_policy.decoupled
    assert streaming.sequence_batching.oldest.max_candidate_sequences == 64
    warm = load("warm")
    assert [w.name for w in warm.model_warmup] == ["zeros", "random", "from_file"]
    assert warm.model_warmup[2].inputs["features"].input_data_file == "features.bin"
    assert warm.version_policy.HasField("all")


def test_files_land_where_triton_looks(built: Path) -> None:
    repo = built / "model_repository"
    assert (repo / "warm" / "warmup" / "features.bin").read_bytes() == (SINK / "warmup" / "features.bin").read_bytes()
    assert (repo / "stateful_direct" / "initial_state" / "initial_cache.bin").is_file()
    assert (repo / "ragged_onnx" / "1" / "model.onnx").is_file() and (
        repo / "ragged_onnx" / "2" / "model.onnx"
    ).is_file()
    assert (repo / "warm" / "1" / "echo.py").is_file()
    assert (repo / "ragged_onnx" / "labels.txt").read_bytes() == (
        SINK / "labels.txt"
    ).read_bytes()  # Triton reads it from the model folder
    assert (repo / "pipeline" / "1").is_dir()


def test_compose_reflects_the_spec(built: Path) -> None:
    service = yaml.safe_load((built / "docker-compose.yml").read_text())["services"]["triton"]
    assert "--model-control-mode=explicit" in service["command"] and "--load-model=*" in service["command"]
    assert "--cache-config=local,size=1048576" in service["command"]
    assert service["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    key = "${TRITON_ADMIN_KEY:?"  # explicit mode: load/unload need the key, which compose reads from the environment
    assert any(a.startswith("--http-restricted-api=model-repository:admin-key=" + key) for a in service["command"])
    assert any(a.startswith("--grpc-restricted-protocol=model-repository:admin-key=" + key) for a in service["command"])
    assert service["ports"] == ["127.0.0.1:8000:8000", "127.0.0.1:8001:8001", "127.0.0.1:8002:8002"]
