"""TensorRT: gated where it cannot run (one clear line), deferred to trtexec at deploy, real builds on a GPU machine."""
from __future__ import annotations

import importlib.util

import pytest

from tritonkit.export import ShapeProfile, TensorRTUnavailable, tensorrt_available, trtexec_command

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

NO_TRT = "TensorRT is not installed here (it needs an NVIDIA GPU machine; scripts/tensorrt_check.py runs these there)"


def gpu_available() -> bool:
    import torch

    return torch.cuda.is_available()


def test_local_tensorrt_request_fails_in_one_line(exporter):
    if tensorrt_available():
        pytest.skip("TensorRT is installed here, so a local build is allowed (see test_local_engine_matches_pytorch)")
    with pytest.raises(TensorRTUnavailable) as info:
        exporter("mlp_trt", {"python": "examples.models.mlp:build"}, {"format": "tensorrt"}, 8)
    assert info.value.line() == (
        "tritonkit.yaml: models.mlp_trt.export.tensorrt.mode: model 'mlp_trt' asks for a local TensorRT build but "
        "TensorRT is not installed here (no module 'tensorrt'); set export.tensorrt.mode: deferred to build the engine "
        "with trtexec in the TensorRT container at deploy time")


def test_torch_tensorrt_request_fails_in_one_line(exporter):
    if importlib.util.find_spec("torch_tensorrt") is not None and gpu_available():
        pytest.skip("Torch-TensorRT and a GPU are present here, so the request is allowed")
    with pytest.raises(TensorRTUnavailable) as info:
        exporter("mlp_ttrt", {"python": "examples.models.mlp:build"}, {"format": "torch_tensorrt"}, 8)
    line = info.value.line()
    assert "\n" not in line and "models.mlp_ttrt.export.format" in line
    assert "use format: tensorrt with export.tensorrt.mode: deferred" in line


def test_trtexec_command():
    profile = ShapeProfile(min={"ids": [1, 8], "mask": [1, 8]}, opt={"ids": [4, 64], "mask": [4, 64]},
                           max={"ids": [8, 128], "mask": [8, 128]})
    assert trtexec_command("/models/enc/1/model.onnx", "/models/enc/1/model.plan", [profile], fp16=True,
                           workspace_mb=2048) == [
        "trtexec", "--onnx=/models/enc/1/model.onnx", "--saveEngine=/models/enc/1/model.plan",
        "--minShapes=ids:1x8,mask:1x8", "--optShapes=ids:4x64,mask:4x64", "--maxShapes=ids:8x128,mask:8x128",
        "--fp16", "--memPoolSize=workspace:2048M"]


def test_deferred_build_installs_onnx_and_plans_trtexec(exporter):
    result = exporter("ctc_trt", {"python": "examples.models.ctc_acoustic:build"},
                      {"format": "tensorrt", "tensorrt": {"mode": "deferred", "fp16": True, "workspace_mb": 512},
                       "exporter": "torchscript", "dynamic_axes": {"features": {1: "frames"}}}, 4)
    assert [p.name for p in result.model_files] == ["model.onnx"]
    plan = result.tensorrt
    assert plan["mode"] == "deferred" and plan["engine"] == "model.plan"
    assert plan["profiles"] == [{"min": {"features": [1, 25, 80]}, "opt": {"features": [4, 50, 80]},
                                 "max": {"features": [4, 100, 80]}}]
    assert plan["command"] == ["trtexec", "--onnx=model.onnx", "--saveEngine=model.plan",
                               "--minShapes=features:1x25x80", "--optShapes=features:4x50x80",
                               "--maxShapes=features:4x100x80", "--fp16", "--memPoolSize=workspace:512M"]


@pytest.mark.skipif(not tensorrt_available(), reason=NO_TRT)
def test_local_engine_matches_pytorch(exporter):
    if not gpu_available():
        pytest.skip("TensorRT is installed but no CUDA GPU is visible")
    result = exporter("mlp_plan", {"python": "examples.models.mlp:build"},
                      {"format": "tensorrt", "tensorrt": {"mode": "local"}, "tolerance": {"atol": 1e-3, "rtol": 1e-3}},
                      8)
    assert [p.name for p in result.model_files] == ["model.plan"]
    assert result.tensorrt["mode"] == "local"
    assert result.tensorrt["max_errors"]["output"]["max_abs"] < 1e-3
