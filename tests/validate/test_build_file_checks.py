"""`tritonkit build` runs the container's load-time file checks before it writes anything: an ONNX file whose
graph the config contradicts is one line naming the spec, the field and the user's file, exit 2, no repository;
a label file the spec names is copied into the model folder, where Triton reads it."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

from .repo_helpers import onnx_graph

pytestmark = pytest.mark.slow  # builds through the CLI: seconds each

F32 = 1
SPEC = """\
version: 1
models:
  scorer:
    platform: onnxruntime_onnx
    max_batch_size: 8
    input: [{{name: {input}, data_type: TYPE_FP32, dims: [4]}}]
    output: [{{name: y, data_type: TYPE_FP32, dims: [4], label_filename: data/labels.txt}}]
    instance_group: [{{kind: KIND_CPU}}]
    files: {{model.onnx: models/scorer.onnx}}
"""


def project(tmp_path: Path, input_name: str) -> Path:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "scorer.onnx").write_bytes(onnx_graph({"x": (F32, [None, 4])}, {"y": (F32, [None, 4])}))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "labels.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "tritonkit.yaml").write_text(SPEC.format(input=input_name))
    return tmp_path


def test_a_config_the_graph_contradicts_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    result = run_cli("build", cwd=project(tmp_path, "input"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "tritonkit.yaml: models.scorer.input[0].name: 'input' is not an input of models/scorer.onnx (its inputs: x); "
        "rename it to 'x' (the graph's name), or export the model again to match"]
    assert not (tmp_path / "model_repository").exists()


def test_the_accepted_twin_builds_with_its_label_file_in_the_model_folder(tmp_path: Path) -> None:
    result = run_cli("build", cwd=project(tmp_path, "x"))
    assert result.returncode == 0, result.stderr
    model = tmp_path / "model_repository" / "scorer"
    assert (model / "labels.txt").read_text() == "a\nb\nc\nd\n"
    config = (model / "config.pbtxt").read_text()
    assert 'label_filename: "labels.txt"' in config
    assert "count:" not in config  # an unset count is left to Triton (2 CPU instances for onnxruntime)
    assert run_cli("validate", "model_repository", cwd=tmp_path).returncode == 0


def test_a_missing_label_file_is_one_line_in_the_spec_s_terms(tmp_path: Path) -> None:
    (project(tmp_path, "x") / "data" / "labels.txt").unlink()
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "tritonkit.yaml: models.scorer.output[0].label_filename: file 'data/labels.txt' not found (looked in "
        "data/labels.txt); fix the path (relative to tritonkit.yaml)"]
    assert not (tmp_path / "model_repository").exists()
