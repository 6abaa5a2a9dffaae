"""A config against its real ONNX graph, as the onnxruntime backend r24.10 compares them at load (ValidateInputs,
ValidateOutputs, CompareDimsSupported): each refused pair gives exactly its one-line error, naming the config, the
field, the graph file and the fix; its accepted twin (one change away) gives nothing."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from .repo_helpers import Model, onnx_graph, outcome

F32, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
XY = onnx_graph({"x": (F32, [None, 4])}, {"y": (F32, [None, 4])})  # a batching graph: x [batch, 4] -> y [batch, 4]
M = "m/config.pbtxt: "
AGAIN = "or export the model again to match"


def onnx_model(body: str, graph: bytes = XY,
               head: str = 'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n') -> dict[str, Model]:
    return {"m": (head + body, {"1/model.onnx": graph})}


def io(inputs: str, outputs: str = '{name: "y" data_type: TYPE_FP32 dims: [4]}') -> str:
    return f"input [{inputs}]\noutput [{outputs}]\n"


X = '{name: "x" data_type: TYPE_FP32 dims: [4]}'


def with_default(batch: int | None) -> bytes:
    """y = a + x, where x is an input with a default value (an initializer listed as an input), which the backend
    lets a config declare optional; `batch`: the first dimension (None: dynamic)."""
    return helper.make_model(helper.make_graph(
        [helper.make_node("Add", ["a", "x"], ["y"])], "with_default",
        [helper.make_tensor_value_info("a", F32, [batch, 4]), helper.make_tensor_value_info("x", F32, [batch, 4])],
        [helper.make_tensor_value_info("y", F32, [batch, 4])],
        [numpy_helper.from_array(np.zeros((1, 4), dtype=np.float32), "x")])).SerializeToString()


CASES = [
    ("input-name-differs", onnx_model(io('{name: "input" data_type: TYPE_FP32 dims: [4]}')), onnx_model(io(X)),
     M + "input[0].name: 'input' is not an input of 1/model.onnx (its inputs: x); rename it to 'x' (the graph's "
         f"name), {AGAIN}"),
    ("output-the-graph-lacks",
     onnx_model(io(X, '{name: "y" data_type: TYPE_FP32 dims: [4]}, {name: "z" data_type: TYPE_FP32 dims: [4]}')),
     onnx_model(io(X)),
     M + f"output[1].name: 'z' is not an output of 1/model.onnx (its outputs: y); remove it, {AGAIN}"),
    ("input-data-type-differs", onnx_model(io('{name: "x" data_type: TYPE_INT64 dims: [4]}')), onnx_model(io(X)),
     M + "input[0].data_type: input 'x' is TYPE_INT64 but 1/model.onnx gives TYPE_FP32; set data_type: TYPE_FP32"),
    ("output-data-type-differs", onnx_model(io(X, '{name: "y" data_type: TYPE_FP16 dims: [4]}')), onnx_model(io(X)),
     M + "output[0].data_type: output 'y' is TYPE_FP16 but 1/model.onnx gives TYPE_FP32; set data_type: TYPE_FP32"),
    ("input-dims-differ", onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [3]}')), onnx_model(io(X)),
     M + "input[0].dims: input 'x' has dims [3] (with the batch dimension: [-1, 3]) but 1/model.onnx gives shape [-1, "
         f"4]; write dims: [4], {AGAIN}"),
    # an input may narrow a dynamic graph dimension, but not widen a fixed one to -1
    ("input-variable-where-the-graph-is-fixed", onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [-1]}')),
     onnx_model(io(X)),
     M + "input[0].dims: input 'x' has dims [-1] (with the batch dimension: [-1, -1]) but 1/model.onnx gives shape "
         f"[-1, 4]; write dims: [4], {AGAIN}"),
    ("input-rank-differs", onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [2, 2]}')),
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [2, 2]}'),
                graph=onnx_graph({"x": (F32, [None, 2, 2])}, {"y": (F32, [None, 4])})),
     M + "input[0].dims: input 'x' has dims [2, 2] (with the batch dimension: [-1, 2, 2]) but 1/model.onnx gives "
         f"shape [-1, 4]; write dims: [4], {AGAIN}"),
    # outputs compare exactly: a dynamic graph dimension must stay -1 in the config
    ("output-fixed-where-the-graph-is-variable",
     onnx_model(io(X, '{name: "y" data_type: TYPE_FP32 dims: [4]}'),
                graph=onnx_graph({"x": (F32, [None, 4])}, {"y": (F32, [None, "n"])})),
     onnx_model(io(X, '{name: "y" data_type: TYPE_FP32 dims: [-1]}'),
                graph=onnx_graph({"x": (F32, [None, 4])}, {"y": (F32, [None, "n"])})),
     M + "output[0].dims: output 'y' has dims [4] (with the batch dimension: [-1, 4]) but 1/model.onnx gives shape "
         f"[-1, -1]; write dims: [-1], {AGAIN}"),
    ("reshape-is-what-is-compared",
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [4] reshape: {shape: [2, 2]}}')),
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [2, 2] reshape: {shape: [4]}}')),
     M + "input[0].reshape.shape: input 'x' has reshape [2, 2] (with the batch dimension: [-1, 2, 2]) but "
         f"1/model.onnx gives shape [-1, 4]; write reshape: {{shape: [4]}}, {AGAIN}"),
    # max_batch_size > 0 makes the graph's first dimension the batch: it must be dynamic
    ("batch-dimension-fixed-in-the-graph",
     onnx_model(io(X, '{name: "y" data_type: TYPE_FP32 dims: [4]}'),
                graph=onnx_graph({"x": (F32, [1, 4])}, {"y": (F32, [None, 4])})),
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [1, 4]}', '{name: "y" data_type: TYPE_FP32 dims: [1, 4]}'),
                graph=onnx_graph({"x": (F32, [1, 4])}, {"y": (F32, [1, 4])}),
                head='platform: "onnxruntime_onnx"\nmax_batch_size: 0\n'),
     M + "max_batch_size: is 8, so the first dimension of input 'x' is the batch, but 1/model.onnx fixes it: shape [1, "
         "4]; set max_batch_size: 0 and dims: [1, 4], or export the model with a dynamic first (batch) dimension"),
    # without batching the config's dims are the whole shape
    ("no-batching-dims-are-the-whole-shape",
     onnx_model(io(X, '{name: "y" data_type: TYPE_FP32 dims: [-1, 4]}'),
                head='platform: "onnxruntime_onnx"\nmax_batch_size: 0\n'),
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [-1, 4]}', '{name: "y" data_type: TYPE_FP32 dims: [-1, 4]}'),
                head='platform: "onnxruntime_onnx"\nmax_batch_size: 0\n'),
     M + f"input[0].dims: input 'x' has dims [4] but 1/model.onnx gives shape [-1, 4]; write dims: [-1, 4], {AGAIN}"),
    ("graph-input-missing-from-the-config",
     onnx_model(io(X), graph=onnx_graph({"x": (F32, [None, 4]), "mask": (I64, [None, 4])}, {"y": (F32, [None, 4])})),
     onnx_model(io(X + ', {name: "mask" data_type: TYPE_INT64 dims: [4]}'),
                graph=onnx_graph({"x": (F32, [None, 4]), "mask": (I64, [None, 4])}, {"y": (F32, [None, 4])})),
     M + "input: 1/model.onnx has 2 inputs but the config declares 1; it lacks 'mask'; add them to input (or as "
         "batch_input / sequence control entries)"),
    ("optional-input-with-batching",
     onnx_model(io('{name: "a" data_type: TYPE_FP32 dims: [4]}, {name: "x" data_type: TYPE_FP32 dims: [4] optional: '
                   'true}'), graph=with_default(None)),
     onnx_model(io('{name: "a" data_type: TYPE_FP32 dims: [1, 4]}, {name: "x" data_type: TYPE_FP32 dims: [1, 4] '
                   'optional: true}', '{name: "y" data_type: TYPE_FP32 dims: [1, 4]}'),
                graph=with_default(1), head='platform: "onnxruntime_onnx"\nmax_batch_size: 0\n'),
     M + "input[1].optional: optional input 'x' is not supported by the onnxruntime backend for a model that batches "
         "(max_batch_size 8); remove optional, or set max_batch_size: 0"),
    ("ragged-input-must-be-flat", onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [4] allow_ragged_batch: true}')),
     onnx_model(io('{name: "x" data_type: TYPE_FP32 dims: [-1] allow_ragged_batch: true}'),
                graph=onnx_graph({"x": (F32, [None])}, {"y": (F32, [None, 4])})),
     M + "input[0].allow_ragged_batch: ragged input 'x' must have shape [-1] in 1/model.onnx, which gives [-1, 4]; "
         f"export the input flat with one dynamic dimension, or remove allow_ragged_batch, {AGAIN}"),
    ("sequence-control-not-in-the-graph",
     onnx_model(io(X) + 'sequence_batching { control_input [{name: "START" control [{kind: CONTROL_SEQUENCE_START '
                        'int32_false_true: [0, 1]}]}] }\n'),
     onnx_model(io(X) + 'sequence_batching { control_input [{name: "START" control [{kind: CONTROL_SEQUENCE_START '
                        'int32_false_true: [0, 1]}]}] }\n',
                graph=onnx_graph({"x": (F32, [None, 4]), "START": (I32, [None, 1])}, {"y": (F32, [None, 4])})),
     M + "sequence_batching.control_input[0].name: sequence control 'START' is not an input of 1/model.onnx (its "
         f"inputs: x); name a graph input, {AGAIN}"),
]


@pytest.mark.parametrize(("rejected", "accepted", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_onnx_rule(rejected: dict[str, Model], accepted: dict[str, Model], line: str, tmp_path: Path) -> None:
    errors, _ = outcome(tmp_path / "rejected", rejected)
    assert errors == [line]
    assert outcome(tmp_path / "accepted", accepted) == ([], [])


@pytest.mark.parametrize("content", [b"not a model", b""], ids=["garbage", "empty"])
def test_a_file_that_is_no_onnx_model_is_refused(tmp_path: Path, content: bytes) -> None:
    errors, _ = outcome(tmp_path, onnx_model(io(X), graph=content))
    assert len(errors) == 1 and errors[0].startswith(M + "default_model_filename: 1/model.onnx is not an ONNX model "
                                                         "the onnxruntime backend can load (")
    assert errors[0].endswith("); replace it with the exported .onnx file")


def test_every_broken_tensor_is_named_in_one_run(tmp_path: Path) -> None:
    """Triton stops at the first problem; validate names each tensor's, so one fix round is enough."""
    errors, _ = outcome(tmp_path,
                        onnx_model(io('{name: "input" data_type: TYPE_FP32 dims: [4]}',
                                      '{name: "y" data_type: TYPE_INT32 dims: [4]}')))
    assert [e.split(": ")[1] for e in errors] == ["input[0].name", "output[0].data_type"]


def test_a_python_model_running_an_onnx_file_is_not_checked_against_it(tmp_path: Path) -> None:
    """The Python backend hands requests to model.py; only it knows how it feeds the graph."""
    model = ('backend: "python"\nmax_batch_size: 8\n' + io('{name: "text" data_type: TYPE_STRING dims: [1]}'),
             {"1/model.py": "", "1/model.onnx": XY})
    assert outcome(tmp_path, {"m": model}) == ([], [])


def test_weights_in_external_data_are_not_read(tmp_path: Path) -> None:
    """Only the graph's declarations are read: the check passes with the weights file gone, and names the
    graph's tensors all the same."""
    weights = numpy_helper.from_array(np.ones((4, 4), dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                              [helper.make_tensor_value_info("x", F32, [None, 4])],
                              [helper.make_tensor_value_info("y", F32, [None, 4])], [weights])
    folder = tmp_path / "repo" / "m" / "1"
    folder.mkdir(parents=True)
    onnx.save(helper.make_model(graph), str(folder / "model.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True,
              location="model.onnx.data", size_threshold=0)
    (folder / "model.onnx.data").unlink()
    (folder.parent / "config.pbtxt").write_text('platform: "onnxruntime_onnx"\nmax_batch_size: 8\n' + io(X))
    assert outcome(tmp_path / "repo", {}) == ([], [])
    (folder.parent / "config.pbtxt").write_text(
        'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n' + io('{name: "X" data_type: TYPE_FP32 dims: [4]}')
    )
    errors, _ = outcome(tmp_path / "repo", {})
    assert errors == [M + "input[0].name: 'X' is not an input of 1/model.onnx (its inputs: x); rename it to 'x' (the "
                          f"graph's name), {AGAIN}"]


def test_the_wire_format_reader_reads_what_the_onnx_package_reads(tmp_path: Path) -> None:
    """onnx_graph.py decodes the protobuf itself (validate needs neither onnx nor numpy); on real files of every
    shape it meets it gives what onnx.load gives: required inputs, inputs with a default, outputs, types, shapes."""
    from tritonkit.validate.onnx_graph import read_graph

    sequence = helper.make_graph([helper.make_node("SequenceLength", ["s"], ["n"])], "seq",
                                 [helper.make_tensor_sequence_value_info("s", F32, None)],
                                 [helper.make_tensor_value_info("n", I64, [])])
    unshaped = helper.make_graph([helper.make_node("Identity", ["u"], ["v"])], "unshaped",
                                 [helper.make_tensor_value_info("u", TensorProto.BFLOAT16, None)],
                                 [helper.make_tensor_value_info("v", TensorProto.STRING, ["n", 3])])
    files = {"xy": XY, "default": with_default(None), "sequence": helper.make_model(sequence).SerializeToString(),
             "unshaped": helper.make_model(unshaped).SerializeToString()}
    for name, data in files.items():
        (tmp_path / f"{name}.onnx").write_bytes(data)
    weights = numpy_helper.from_array(np.ones((4, 4), dtype=np.float32), "w")
    big = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
                            [helper.make_tensor_value_info("x", F32, [None, 4])],
                            [helper.make_tensor_value_info("y", F32, [None, 4])], [weights])
    onnx.save(helper.make_model(big), str(tmp_path / "external.onnx"), save_as_external_data=True,
              location="external.onnx.data", size_threshold=0)
    for path in sorted(tmp_path.glob("*.onnx")):
        graph = onnx.load(str(path), load_external_data=False).graph
        weights_named = {t.name for t in graph.initializer}

        def expected(values: list, keep: bool, weights_named: set[str] = weights_named) -> dict:
            out = {}
            for v in values:
                if (v.name in weights_named) != keep:
                    continue
                tensor = v.type.tensor_type if v.type.WhichOneof("value") == "tensor_type" else None
                shape = (
                    None
                    if tensor is None or not tensor.HasField("shape")
                    else tuple(d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim)
                )
                out[v.name] = (tensor.elem_type if tensor is not None else None, shape)
            return out

        read = read_graph(path)
        got = [
            {n: (t.data_type, t.shape) for n, t in part.items()}
            for part in (read.inputs, read.overridable, read.outputs)
        ]
        want = [expected(list(graph.input), False), expected(list(graph.input), True),
                expected(list(graph.output), False)]
        names = {1: "TYPE_FP32", 7: "TYPE_INT64", 8: "TYPE_STRING", 16: None, None: None}
        assert got == [{n: (names[t], s) for n, (t, s) in part.items()} for part in want], path.name


def test_required_inputs_and_inputs_with_defaults_are_what_onnxruntime_reports(tmp_path: Path) -> None:
    """The backend counts the session's inputs and lets a request send its overridable initializers too."""
    ort = pytest.importorskip("onnxruntime")
    from tritonkit.validate.onnx_graph import read_graph

    path = tmp_path / "model.onnx"
    path.write_bytes(with_default(None))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    graph = read_graph(path)
    assert list(graph.inputs) == [i.name for i in session.get_inputs()] == ["a"]
    assert list(graph.overridable) == [i.name for i in session.get_overridable_initializers()] == ["x"]
    assert list(graph.outputs) == [o.name for o in session.get_outputs()] == ["y"]
