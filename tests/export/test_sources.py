"""TorchScript and ONNX files as sources, external weight data, and option errors found before exporting."""
from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from examples.models import ctc_acoustic, mlp
from tritonkit.export import ExportError
from tritonkit.spec.export import ExportSpec, SourceSpec

from .conftest import REPO_ROOT

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset


@pytest.fixture(scope="module")
def scripted(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ts")
    module, example = mlp.build()
    torch.jit.trace(module, example).save(str(folder / "mlp.pt"))
    return folder


def test_torchscript_source_falls_back_and_records_why(exporter, scripted):
    result = exporter("ts_mlp", {"torchscript": "mlp.pt", "example_inputs": {"features": {"shape": [3, 16]}}},
                      {}, 8, project_dir=scripted)
    assert result.exporter == "torchscript"
    assert result.exporter_reason.startswith("fallback: dynamo export failed: ")
    assert [a["exporter"] for a in result.attempts] == ["dynamo", "torchscript"]
    assert result.inputs == [{"name": "features", "data_type": "TYPE_FP32", "dims": [16]}]
    assert result.max_errors["output"]["max_abs"] < 1e-5


def test_onnx_source_is_checked_run_and_described(exporter, tmp_path):
    module, example = ctc_acoustic.build()
    torch.onnx.export(module, example, str(tmp_path / "ctc.onnx"), dynamo=False, input_names=["features"],
                      output_names=["log_probs"],
                      dynamic_axes={"features": {0: "b", 1: "t"}, "log_probs": {0: "b", 1: "u"}})
    result = exporter("onnx_ctc", {"onnx": "ctc.onnx"}, {"verify": {"lengths": {"t": [7, 33]}}}, 4,
                      project_dir=tmp_path)
    assert result.exporter == "none" and "no PyTorch reference" in result.exporter_reason
    assert result.inputs == [{"name": "features", "data_type": "TYPE_FP32", "dims": [-1, 80]}]
    assert result.outputs == [{"name": "log_probs", "data_type": "TYPE_FP32", "dims": [-1, 29]}]
    assert any("features=[2, 33, 80]" in c for c in result.cases) and any(
        "features=[4, 4, 80]" in c for c in result.cases
    )
    with np.load(result.golden_files[0]) as golden:  # golden outputs are the graph's own answers
        assert golden["output:log_probs"].shape[1] == (golden["input:features"].shape[1] + 1) // 2


def test_external_data_always_writes_model_onnx_data(exporter):
    result = exporter("mlp_ext", {"python": "examples.models.mlp:build"},
                      {"exporter": "torchscript", "external_data": "always"}, 8)
    names = sorted(p.name for p in result.model_files)
    assert names == ["model.onnx", "model.onnx.data"]
    # readable by a container's other uid as model.onnx is (onnx itself creates the data file 0600)
    assert len({stat.S_IMODE(p.stat().st_mode) for p in result.model_files}) == 1
    graph = onnx.load(str(result.onnx_path), load_external_data=False)
    assert all(init.data_location == onnx.TensorProto.EXTERNAL for init in graph.graph.initializer)
    session = ort.InferenceSession(str(result.onnx_path), providers=["CPUExecutionProvider"])
    assert session.run(None, {"features": np.zeros((2, 16), np.float32)})[0].shape == (2, 4)


@pytest.mark.parametrize(
    ("options", "field", "text"),
    [
        ({"dynamic_axes": {"feature": {1: "n"}}}, "models.bad.export.dynamic_axes.feature",
         "use one of: features, output"),
        ({"dynamic_axes": {"features": {0: "n"}}}, "models.bad.export.dynamic_axes.features",
         "axis 0 is the batch axis"),
        ({"verify": {"lengths": {"seq": [4]}}}, "models.bad.export.verify.lengths.seq",
         "'seq' is not a dynamic dim name"),
        ({"output_names": ["a", "b"]}, "models.bad.export.output_names", "2 names but the model returns 1 tensors"),
        ({"input_names": ["a", "b"]}, "models.bad.export.input_names", "2 names for 1 inputs ['features']"),
    ],
)
def test_option_errors_are_located(exporter, options, field, text):
    with pytest.raises(ExportError) as info:
        exporter("bad", {"python": "examples.models.mlp:build"}, {"exporter": "torchscript", **options}, 8)
    assert info.value.field == field
    assert text in info.value.line()


def test_rename_and_progress_on_stderr(exporter, capsys):
    from tritonkit.export import ExportJob, export_model

    root = exporter.root / "renamed"
    job = ExportJob("renamed", SourceSpec(python="examples.models.mlp:build"),
                    ExportSpec(exporter="torchscript", input_names=["x"], output_names=["scores"], opset=17), 2,
                    REPO_ROOT)
    result = export_model(job, root / "1", root / "golden", exporter.cache_dir)
    assert [t["name"] for t in result.inputs] == ["x"] and [t["name"] for t in result.outputs] == ["scores"]
    assert onnx.load(str(result.onnx_path)).opset_import[0].version == 17
    err = capsys.readouterr().err
    for stage in ("cache miss", "load source", "export (torchscript)", "check model", "verify 1/", "golden samples",
                  "installed model.onnx"):
        assert f"] {stage}" in err, err
    assert err.splitlines()[0].startswith("[export renamed ")
