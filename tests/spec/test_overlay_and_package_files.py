"""The `tuned:` overlay replaces the model's own settings; `tritonkit:` paths copy code from the package."""
from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.conftest import run_cli

pytestmark = pytest.mark.slow  # builds through the CLI: seconds each

SPEC = """
version: 1
models:
  scorer:
    backend: python
    max_batch_size: 8
    input: [{name: X, data_type: fp32, dims: [4]}]
    output: [{name: Y, data_type: fp32, dims: [4]}]
    dynamic_batching: {max_queue_delay_microseconds: 100}
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: model.py, runtime: "tritonkit:smoke"}
"""

TUNED = """
tuned:
  scorer:
    max_batch_size: 16
    instance_group: [{kind: KIND_CPU, count: 2}]
    dynamic_batching: {preferred_batch_size: [16], max_queue_delay_microseconds: 2000}
    provenance: {date: "2026-11-29", host: ci, model_analyzer_version: 1.58.0, throughput_infer_per_s: 812.5,
                 p99_latency_ms: 9.1}
"""


def config(project: Path) -> model_config_pb2.ModelConfig:
    text = (project / "model_repository" / "scorer" / "config.pbtxt").read_text()
    return text_format.Parse(text, model_config_pb2.ModelConfig())


def test_tuned_overlay_wins(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("# model\n")
    (tmp_path / "tritonkit.yaml").write_text(SPEC)
    assert run_cli("build", cwd=tmp_path).returncode == 0
    assert config(tmp_path).max_batch_size == 8
    (tmp_path / "tritonkit.yaml").write_text(SPEC + TUNED)
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    tuned = config(tmp_path)
    assert tuned.max_batch_size == 16
    assert tuned.instance_group[0].count == 2
    assert list(tuned.dynamic_batching.preferred_batch_size) == [16]
    assert tuned.dynamic_batching.max_queue_delay_microseconds == 2000


def test_tuned_overlay_for_unknown_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("# model\n")
    (tmp_path / "tritonkit.yaml").write_text(SPEC + TUNED.replace("  scorer:", "  scorr:"))
    result = run_cli("build", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("tritonkit.yaml: tuned.scorr: tuned settings for unknown model 'scorr'")


def test_package_folder_is_copied_into_the_version_dir(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text("# model\n")
    (tmp_path / "tritonkit.yaml").write_text(SPEC)
    assert run_cli("build", cwd=tmp_path).returncode == 0
    copied = tmp_path / "model_repository" / "scorer" / "1" / "runtime"
    assert (copied / "checks.py").is_file() and not list(copied.rglob("__pycache__"))
