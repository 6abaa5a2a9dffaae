"""The example models export, verify against PyTorch at several shapes, and yield signatures that match their graphs."""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from .conftest import EXAMPLES, graph_io

pytestmark = pytest.mark.slow  # exports in the child process (torch): minutes, so out of the unit subset

TRITON_OF = {onnx.TensorProto.FLOAT: "TYPE_FP32", onnx.TensorProto.INT64: "TYPE_INT64"}

EXPECTED = {
    "mlp": (
        {"features": ("TYPE_FP32", [16])},
        {"output": ("TYPE_FP32", [4])},
    ),
    "tiny_gpt": (
        {"input_ids": ("TYPE_INT64", [-1]), "past_key": ("TYPE_FP32", [2, 2, -1, 16]),
         "past_value": ("TYPE_FP32", [2, 2, -1, 16])},
        {"logits": ("TYPE_FP32", [-1, 64]), "present_key": ("TYPE_FP32", [2, 2, -1, 16]),
         "present_value": ("TYPE_FP32", [2, 2, -1, 16])},
    ),
    "ctc_acoustic": (
        {"features": ("TYPE_FP32", [-1, 80])},
        {"log_probs": ("TYPE_FP32", [-1, 29])},
    ),
    "transformer_encoder": (
        {"input_ids": ("TYPE_INT64", [-1]), "attention_mask": ("TYPE_INT64", [-1])},
        {"hidden": ("TYPE_FP32", [-1, 32]), "pooled": ("TYPE_FP32", [32])},
    ),
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_signature_matches_graph(exporter, name):
    result = exporter.example(name)
    want_in, want_out = EXPECTED[name]
    assert {t["name"]: (t["data_type"], t["dims"]) for t in result.inputs} == want_in
    assert {t["name"]: (t["data_type"], t["dims"]) for t in result.outputs} == want_out
    io = graph_io(result.onnx_path)
    for entry in result.inputs + result.outputs:
        elem, dims = io[entry["name"]]
        assert isinstance(dims[0], str), f"{entry['name']}: the batch axis must be dynamic in the graph"
        assert TRITON_OF[elem] == entry["data_type"]
        assert [-1 if isinstance(d, str) else d for d in dims[1:]] == entry["dims"]


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_verified_within_tolerance_at_several_shapes(exporter, name):
    result = exporter.example(name)
    _, options, max_batch = EXAMPLES[name]
    assert set(result.max_errors) == {t["name"] for t in result.outputs}
    for output, err in result.max_errors.items():
        assert err["max_abs"] < 1e-4, (output, err)
    labels = " | ".join(result.cases)
    assert "random batch=1:" in labels and f"random batch={max_batch}:" in labels
    for dims in options.get("dynamic_axes", {}).values():
        for dim in dims.values():
            assert labels.count(f"{dim}=") >= 2, f"no verification at other {dim} lengths: {labels}"


def test_exporter_choice_is_recorded(exporter):
    assert exporter.example("mlp").exporter == "dynamo"
    assert "default" in exporter.example("mlp").exporter_reason
    ctc = exporter.example("ctc_acoustic")
    assert ctc.exporter == "torchscript"
    assert ctc.exporter_reason == "chosen in the spec (export.exporter: torchscript)"


@pytest.mark.parametrize("name", ["tiny_gpt", "ctc_acoustic"])
def test_golden_samples_replay_through_onnxruntime(exporter, name):
    result = exporter.example(name)
    golden_dir = result.golden_files[0].parent
    assert golden_dir.name == "golden" and golden_dir.parent == result.onnx_path.parent.parent
    npz = sorted(golden_dir.glob("*.npz"))
    assert [p.name for p in npz] == [f"{i:03d}.npz" for i in range(len(npz))] and len(npz) == 4
    tolerance = json.loads((golden_dir / "tolerance.json").read_text())
    assert tolerance["default"] == {"atol": 1e-4, "rtol": 1e-4}
    session = ort.InferenceSession(str(result.onnx_path), providers=["CPUExecutionProvider"])
    shapes = set()
    for path in npz:
        with np.load(path) as data:
            inputs = {k[len("input:"):]: data[k] for k in data.files if k.startswith("input:")}
            outputs = {k[len("output:"):]: data[k] for k in data.files if k.startswith("output:")}
        assert set(inputs) == {t["name"] for t in result.inputs}
        assert set(outputs) == {t["name"] for t in result.outputs}
        got = dict(zip(outputs, session.run(list(outputs), inputs)))
        for key, want in outputs.items():
            np.testing.assert_allclose(got[key], want, atol=1e-4, rtol=1e-4)
        shapes.add(tuple(inputs[result.inputs[0]["name"]].shape))
    assert len(shapes) >= 3, f"golden samples should cover several shapes, got {shapes}"


def test_kv_cache_round_trip_decodes_like_one_pass(exporter):
    """present_* fed back as past_* gives the same logits as running the whole sequence at once."""
    result = exporter.example("tiny_gpt")
    session = ort.InferenceSession(str(result.onnx_path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 64, size=(2, 6))
    empty = np.zeros((2, 2, 2, 0, 16), dtype=np.float32)
    full = session.run(["logits"], {"input_ids": ids, "past_key": empty, "past_value": empty})[0]
    first = session.run(None, {"input_ids": ids[:, :4], "past_key": empty, "past_value": empty})
    step = session.run(["logits"], {"input_ids": ids[:, 4:], "past_key": first[1], "past_value": first[2]})[0]
    np.testing.assert_allclose(step, full[:, 4:], atol=1e-4)
