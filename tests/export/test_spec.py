"""The `source:` and `export:` spec sections: defaults, YAML shapes, and errors for impossible settings."""
from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from tritonkit.spec.export import ExportSpec, SourceSpec, TensorRTSpec

YAML = """
source:
  python: examples.models.tiny_gpt:build
  kwargs: {seq: 8}
export:
  exporter: torchscript
  opset: 17
  dynamic_axes: {input_ids: {1: seq}, past_key: {3: past}}
  tolerance: {atol: 1e-3, outputs: {logits: {atol: 1e-2, rtol: 0}}}
  verify: {batch_sizes: [1, 3], lengths: {seq: [4, 16]}}
  format: tensorrt
  tensorrt:
    mode: deferred
    fp16: true
    profiles:
      - {min: {input_ids: [1, 1]}, opt: {input_ids: [4, 64]}, max: {input_ids: [8, 128]}}
"""


def test_full_yaml_parses():
    data = yaml.safe_load(YAML)
    source, export = SourceSpec.model_validate(data["source"]), ExportSpec.model_validate(data["export"])
    assert source.kind == "python" and source.kwargs == {"seq": 8} and source.python_path == ["."]
    assert export.dynamic_axes == {"input_ids": {1: "seq"}, "past_key": {3: "past"}}
    assert export.tolerance.for_output("logits").atol == 1e-2
    assert export.tolerance.for_output("present_key").atol == 1e-3  # YAML 1.1 reads 1e-3 as a string; coerced
    assert export.tensorrt.mode == "deferred" and export.tensorrt.profiles[0].max["input_ids"] == [8, 128]


def test_defaults():
    export = ExportSpec()
    assert (export.format, export.exporter, export.opset, export.external_data) == ("onnx", "auto", 18, "auto")
    assert export.tolerance.atol == export.tolerance.rtol == 1e-4
    assert export.verify.batch_sizes is None and export.verify.golden_samples == 4
    assert export.tensorrt == TensorRTSpec(mode="local", fp16=False, int8=False, workspace_mb=1024, profiles=[])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "give exactly one of python, torchscript, onnx"),
        ({"python": "a:b", "onnx": "m.onnx"}, "got python, onnx"),
        ({"python": "examples.models.mlp"}, "must look like 'package.module:function'"),
        ({"onnx": "m.onnx", "kwargs": {"x": 1}}, "kwargs only apply to a python entry point"),
        ({"python": "a:b", "pyhton_path": ["."]}, "did you mean 'python_path'?"),
        ({"torchscript": "m.pt", "example_inputs": {"x": {"shape": [0, 3]}}}, "concrete sizes >= 1"),
    ],
)
def test_bad_sources(data, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        SourceSpec.model_validate(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"opset": 16}, "Input should be 17 or 18"),
        ({"exporter": "fx"}, "'auto', 'dynamo' or 'torchscript'"),
        ({"dynamic_axes": {"x": {1: "seq len"}}}, "must be an identifier"),
        ({"output_names": ["a", "a"]}, "names must be distinct"),
        ({"verify": {"lengths": {"seq": []}}}, "non-empty list"),
        ({"tolerance": {"atol": -1}}, "greater than or equal to 0"),
        ({"tensorrt": {"profiles": [{"min": {"x": [4]}, "opt": {"x": [2]}, "max": {"x": [8]}}]}}, "min <= opt <= max"),
        ({"tensorrt": {"mode": "remote"}}, "'local' or 'deferred'"),
    ],
)
def test_bad_export_options(data, message):
    with pytest.raises(ValidationError, match=message):
        ExportSpec.model_validate(data)
