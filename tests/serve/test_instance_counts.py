"""Triton's default instance count where a group leaves `count` out: what the container runs, the embedded
fallback runs and deploy sizes (core SetDefaultInstanceCount: 2 on CPU for onnxruntime/tensorflow, else 1)."""
from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import text_format

from tritonkit.deploy.sizing import footprint, size
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
    def instance_cpu(model) -> int:
        return size([model], 0, 1).cpu_millis - size([], 0, 1).cpu_millis

    assert instance_cpu(unset) == 2 * instance_cpu(one)


def test_deploy_cpu_request_is_the_named_threads_else_a_small_default(tmp_path: Path) -> None:
    """1000m per intra-op thread an instance asks for; 250m for an instance that names none; 200m for Triton."""
    model = tmp_path / "m"
    (model / "1").mkdir(parents=True)
    (model / "1" / "model.onnx").write_bytes(b"x" * 1000)
    threads = 'parameters { key: "intra_op_thread_count" value: { string_value: "3" } }'
    threaded = footprint("m", _config(f'platform: "onnxruntime_onnx" instance_group [{{ kind: KIND_CPU count: 2 }}] '
                                      f'{threads}'), model)
    plain = footprint("p", _config('backend: "python" instance_group [{ kind: KIND_CPU count: 1 }]'), model)
    assert size([], 0, 1).cpu_millis == 200
    assert size([threaded, plain], 0, 1).cpu_millis == 200 + 2 * 3 * 1000 + 250
