"""Triton's default instance count where a group leaves `count` out: what the container runs, the embedded
fallback runs and deploy sizes (core SetDefaultInstanceCount: 2 on CPU for onnxruntime/tensorflow, else 1)."""
from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from tritonkit.deploy.sizing import footprint
from tritonkit.serve.fallback import fallback_config, plan
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.model_config import pb


def _config(text: str) -> pb.ModelConfig:
    return text_format.Parse(text, pb.ModelConfig())


@pytest.mark.parametrize(("text", "expected"), [
    ('backend: "onnxruntime" instance_group [{ kind: KIND_CPU }]', [2]),
    ('platform: "onnxruntime_onnx" instance_group [{ kind: KIND_AUTO }]', [2]),
    ('platform: "tensorflow_savedmodel" instance_group [{ kind: KIND_CPU }]', [2]),
    ('backend: "onnxruntime" instance_group [{ kind: KIND_CPU count: 3 }]', [3]),
    ('backend: "onnxruntime" instance_group [{ kind: KIND_GPU }]', [1]),
    ('backend: "python" instance_group [{ kind: KIND_CPU }]', [1]),
    ('platform: "pytorch_libtorch" instance_group [{ kind: KIND_CPU }]', [1]),
    ('backend: "onnxruntime"', [2]),      # no group: Triton adds one with the default count
    ('backend: "python"', [1]),
    ('platform: "ensemble"', []),
])
def test_group_counts_follow_triton_defaults(text: str, expected: list[int]) -> None:
    config = _config(text)
    assert [group_count(config, g) for g in instance_groups(config)] == expected


def test_the_embedded_fallback_runs_the_containers_default_count(tmp_path: Path, write_onnx_model) -> None:
    write_onnx_model(tmp_path / "repo", "plain")
    config, fallback = plan(tmp_path / "repo")[0]["plain"]
    config.ClearField("instance_group")
    config.instance_group.add(kind=pb.ModelInstanceGroup.KIND_CPU)
    assert [g.count for g in fallback_config(config, fallback, gpu=False).instance_group] == [2]
    config.ClearField("instance_group")
    assert [g.count for g in fallback_config(config, fallback, gpu=False).instance_group] == [2]


def test_deploy_sizing_counts_the_default_instances(tmp_path: Path) -> None:
    model = tmp_path / "m"
    (model / "1").mkdir(parents=True)
    (model / "1" / "model.onnx").write_bytes(b"x" * 1000)
    unset = footprint("m", _config('platform: "onnxruntime_onnx" instance_group [{ kind: KIND_CPU }]'), model)
    one = footprint("m", _config('platform: "onnxruntime_onnx" instance_group [{ kind: KIND_CPU count: 1 }]'), model)
    assert (unset.cpu_instances, one.cpu_instances) == (2, 1)
    assert unset.cpu_threads == 2 * one.cpu_threads
