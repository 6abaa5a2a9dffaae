"""Graph signatures become Triton config entries; a spec that contradicts the graph is an error naming field and fix."""
from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper
from pydantic import TypeAdapter

from tritonkit.errors import Where
from tritonkit.export import SignatureError, read_signature, reconcile
from tritonkit.export.signature import Signature, TensorSig
from tritonkit.spec.tensors import TensorInput


def write_graph(path: Path, inputs, outputs) -> Path:
    """An ONNX file with the given I/O (name, elem type, shape with dim_param strings)."""
    graph = helper.make_graph(
        [helper.make_node("Identity", [inputs[0][0]], [outputs[0][0]])], "g",
        [helper.make_tensor_value_info(*i) for i in inputs], [helper.make_tensor_value_info(*o) for o in outputs])
    onnx.save(helper.make_model(graph), str(path))
    return path


@pytest.fixture
def graph(tmp_path: Path) -> Path:
    return write_graph(
        tmp_path / "m.onnx",
        [("tokens", TensorProto.INT32, ["batch", "seq"]), ("mask", TensorProto.BOOL, ["batch", "seq"]),
         ("pixels", TensorProto.FLOAT16, ["batch", 3, 8, 8])],
        [("probs", TensorProto.FLOAT, ["batch", "seq", 10])])


def test_read_signature_drops_batch_and_maps_types(graph):
    sig = read_signature(graph, max_batch_size=8)
    assert sig.as_dict() == {
        "inputs": [{"name": "tokens", "data_type": "TYPE_INT32", "dims": [-1]},
                   {"name": "mask", "data_type": "TYPE_BOOL", "dims": [-1]},
                   {"name": "pixels", "data_type": "TYPE_FP16", "dims": [3, 8, 8]}],
        "outputs": [{"name": "probs", "data_type": "TYPE_FP32", "dims": [-1, 10]}],
    }
    assert read_signature(graph, max_batch_size=0).inputs[2].dims == [-1, 3, 8, 8]


def test_fixed_first_dim_cannot_be_the_batch_axis(tmp_path):
    path = write_graph(tmp_path / "fixed.onnx", [("x", TensorProto.FLOAT, [1, 4])], [("y", TensorProto.FLOAT, [1, 4])])
    with pytest.raises(SignatureError) as info:
        read_signature(path, 4, Where("tritonkit.yaml", "models.fixed"))
    assert info.value.field == "models.fixed.max_batch_size"
    assert "fixed first dim 1" in info.value.problem and "set max_batch_size: 0" in info.value.fix
    assert read_signature(path, 0).inputs == [TensorSig("x", "TYPE_FP32", [1, 4])]


def test_reconcile_fills_in_and_narrows(graph):
    sig = reconcile(read_signature(graph, 8), [{"name": "tokens", "data_type": "TYPE_INT32", "dims": [128]}], None)
    assert [t.dims for t in sig.inputs] == [[128], [-1], [3, 8, 8]]
    assert sig.outputs == [TensorSig("probs", "TYPE_FP32", [-1, 10])]
    typed = reconcile(read_signature(graph, 8), [TensorInput(name="pixels", data_type="fp16", dims=[192],
                                                             reshape={"shape": [3, 8, 8]})])
    assert typed.inputs[2] == TensorSig("pixels", "TYPE_FP16", [192])


@pytest.mark.parametrize(
    ("entry", "field", "problem", "fix"),
    [
        ({"name": "pixels", "data_type": "TYPE_FP32"}, "input[0].data_type",
         "TYPE_FP32 but the graph's 'pixels' is TYPE_FP16", "write data_type: TYPE_FP16"),
        ({"name": "pixels", "dims": [3, 64]}, "input[0].dims", "has rank 2", "write dims: [3, 8, 8]"),
        ({"name": "pixels", "dims": [3, 8, 9]}, "input[0].dims", "dims[2] is 9 but the graph fixes it to 8",
         "[3, 8, 8]"),
        ({"name": "pixels", "dims": [3, -1, 8]}, "input[0].dims", "dims[1] is -1 but the graph fixes it to 8",
         "[3, 8, 8]"),
        ({"name": "pixels", "dims": [192], "reshape": {"shape": [3, 64]}}, "input[0].reshape.shape", "rank 2",
         "[3, 8, 8]"),
        ({"name": "token"}, "input[0].name", "input 'token' is not in the exported graph", "did you mean 'tokens'?"),
    ],
)
def test_contradictions_name_field_and_fix(graph, entry, field, problem, fix):
    with pytest.raises(SignatureError) as info:
        reconcile(read_signature(graph, 8), [entry], where=Where("tritonkit.yaml", "models.enc"))
    err = info.value
    assert err.field == f"models.enc.{field}"
    assert problem in err.problem and fix in err.fix
    assert err.line().startswith(f"tritonkit.yaml: models.enc.{field}: ")


def test_unknown_output_lists_the_graph_outputs(graph):
    with pytest.raises(SignatureError) as info:
        reconcile(read_signature(graph, 8), None, [{"name": "logits_out"}])
    assert info.value.fix == "the graph's outputs are: probs"


def test_signature_round_trips_through_json(graph):  # as the export child's result.json carries it
    sig = read_signature(graph, 8)
    adapter = TypeAdapter(Signature)
    assert adapter.validate_json(adapter.dump_json(sig)) == sig
