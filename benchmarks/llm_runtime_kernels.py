"""The decoder's linear layers in two runtimes, for benchmarks/llm_runtimes.py: every MatMulNBits of the example's
int4 graph, with its own weights, as one graph for onnxruntime (MatMulNBits as the engine runs it) and one for
OpenVINO (the same blocks as an int4/int8 weight decompressed into its FullyConnected, as NNCF writes them).

Run in the runtimes' virtualenv (openvino beside the engine's onnxruntime version):
    python benchmarks/llm_runtime_kernels.py GRAPH --threads 2 --rows 1,2,4,8,16 --rounds 7
Prints one JSON object: {"ort": {rows: median seconds a call}, "openvino": {...}, "decoder": {1: a whole decode
step of the graph in onnxruntime}, "rounds": each round's, "max_relative_diff", "layers"}; the rounds alternate
the three.
Each graph's input is x [rows, widest K]; a layer reads its first K columns, and each layer's output is summed per
row (one Concat of [rows, layers] out), so both runtimes return the same few bytes.
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def linear_layers(graph: str) -> list[dict[str, Any]]:
    """Each MatMulNBits of the graph: its attributes and weights (quantized blocks, scales, zero points or None)."""
    model = onnx.load(graph, load_external_data=False)  # onnx refuses hard-linked data files (a built repository's)
    weights = {i.name: _array(i, Path(graph).parent) for i in model.graph.initializer}
    layers = []
    for node in model.graph.node:
        if node.op_type != "MatMulNBits":
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        zero_points = weights[node.input[3]] if len(node.input) > 3 and node.input[3] else None
        layers.append(attrs | {"q": weights[node.input[1]], "scales": weights[node.input[2]],
                               "zero_points": zero_points})
    return layers


def _array(tensor: onnx.TensorProto, folder: Path) -> np.ndarray:
    """An initializer's values, read from its external data file where it has one."""
    if tensor.data_location != TensorProto.EXTERNAL:
        return numpy_helper.to_array(tensor)
    where = {entry.key: entry.value for entry in tensor.external_data}
    dtype = helper.tensor_dtype_to_np_dtype(tensor.data_type)
    data = np.fromfile(folder / where["location"], np.uint8, int(where["length"]), offset=int(where.get("offset", 0)))
    return data.view(dtype).reshape(tuple(tensor.dims))


def ort_session(layers: list[dict[str, Any]], width: int, threads: int) -> Any:
    import onnxruntime as ort

    nodes, inits, sums = [], [], []
    for i, layer in enumerate(layers):
        inputs = [f"x{i}", f"q{i}", f"s{i}"]
        inits += [numpy_helper.from_array(layer["q"], f"q{i}"), numpy_helper.from_array(layer["scales"], f"s{i}")]
        if layer["zero_points"] is not None:
            inits.append(numpy_helper.from_array(layer["zero_points"], f"z{i}"))
            inputs.append(f"z{i}")
        inits.append(numpy_helper.from_array(np.array([layer["K"]], np.int64), f"cols{i}"))
        nodes += [helper.make_node("Slice", ["x", "start", f"cols{i}", "axes"], [f"x{i}"]),
                  helper.make_node("MatMulNBits", inputs, [f"y{i}"], domain="com.microsoft",
                                   **{k: layer[k] for k in ("K", "N", "bits", "block_size", "accuracy_level")}),
                  helper.make_node("ReduceSum", [f"y{i}", "last"], [f"r{i}"], keepdims=1)]
        sums.append(f"r{i}")
    nodes.append(helper.make_node("Concat", sums, ["out"], axis=1))
    inits += [numpy_helper.from_array(np.array([0], np.int64), "start"),
              numpy_helper.from_array(np.array([1], np.int64), "axes"),
              numpy_helper.from_array(np.array([-1], np.int64), "last")]
    graph = helper.make_graph(nodes, "linear", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", width])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["rows", len(layers)])], inits)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _levels(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """MatMulNBits' packed levels (low nibble first at 4 bits) as one uint8 level each, `count` a row."""
    if bits == 8:
        return packed.reshape(packed.shape[0], -1)[:, :count]
    flat = packed.reshape(packed.shape[0], -1)
    return np.stack([flat & 0x0F, flat >> 4], -1).reshape(flat.shape[0], -1)[:, :count]


def _constant(levels: np.ndarray, bits: int) -> Any:
    """An OpenVINO u4/u8 constant of `levels` (u4: two a byte, low nibble first)."""
    import openvino as ov

    if bits == 8:
        return ov.op.Constant(levels.astype(np.uint8))
    flat = levels.reshape(-1)
    packed = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)
    tensor = ov.Tensor(ov.Type.u4, ov.Shape(list(levels.shape)))
    np.copyto(tensor.data.reshape(-1), packed)
    return ov.op.Constant(tensor)


def ov_request(layers: list[dict[str, Any]], width: int, threads: int) -> Any:
    import openvino as ov
    from openvino import opset13 as ops

    x = ops.parameter([-1, width], ov.Type.f32, name="x")
    sums = []
    for layer in layers:
        n, k, bits, block = layer["N"], layer["K"], layer["bits"], layer["block_size"]
        blocks = -(-k // block)
        levels = _levels(layer["q"], bits, blocks * block).reshape(n, blocks, block)
        weight = ops.convert(_constant(levels, bits), ov.Type.f16)
        if layer["zero_points"] is None:
            zero = ops.constant(np.array(1 << (bits - 1), np.float16))
        else:
            zero_levels = _levels(layer["zero_points"].reshape(n, -1), bits, blocks).reshape(n, blocks, 1)
            zero = ops.convert(_constant(zero_levels, bits), ov.Type.f16)
        scales = ops.constant(layer["scales"].reshape(n, blocks, 1).astype(np.float16))
        weight = ops.multiply(ops.subtract(weight, zero), scales)
        weight = ops.convert(ops.reshape(weight, ops.constant(np.array([n, blocks * block], np.int64)), False),
                             ov.Type.f32)
        one = ops.constant(np.array([1], np.int64))
        columns = ops.slice(x, ops.constant(np.array([0], np.int64)),
                            ops.constant(np.array([blocks * block], np.int64)), one, one)
        y = ops.matmul(columns, weight, False, True)  # padded levels are each block's zero point: 0 exactly
        sums.append(ops.reduce_sum(y, ops.constant(np.array([-1], np.int64)), True))
    model = ov.Model([ops.concat(sums, 1)], [x])
    config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}
    return ov.Core().compile_model(model, "CPU", config).create_infer_request()


def decoder_step(graph: str, threads: int, past: int = 32) -> Any:
    """One decode step of the whole graph in onnxruntime (one row, `past` positions cached, caches as inputs and
    outputs): the time the linear layers are a share of."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.spin_duration_us", "20")  # as generate runs it
    session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
    row = {"input_ids": [[200]], "past_length": [[past]], "input_length": [[1]], "logit_index": [[0]]}
    feeds: dict[str, np.ndarray] = {name: np.array(value, np.int64) for name, value in row.items()}
    for given in session.get_inputs():
        if given.name.startswith(("past_key_", "past_value_")):
            _, heads, _, head_dim = given.shape
            feeds[given.name] = np.zeros((1, heads, past + 2, head_dim), np.float32)
    return lambda: session.run(["logits"], feeds)


def seconds_per_call(call: Any, calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - started) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("graph")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rows", default="1,2,4,8,16")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    layers = linear_layers(args.graph)
    width = max(-(-layer["K"] // layer["block_size"]) * layer["block_size"] for layer in layers)
    ort_run, ov_run = ort_session(layers, width, args.threads), ov_request(layers, width, args.threads)
    rng = np.random.default_rng(0)
    inputs = {rows: rng.standard_normal((rows, width), dtype=np.float32) for rows in map(int, args.rows.split(","))}
    # padding columns of x beyond a layer's K meet zero weights in OpenVINO's graph; onnxruntime never reads them
    calls = {"ort": lambda x: ort_run.run(None, {"x": x})[0], "openvino": lambda x: ov_run.infer({0: x})[0]}
    diff = max(float(np.max(np.abs(calls["ort"](x) - calls["openvino"](x)).max(0) / np.abs(calls["ort"](x)).max(0)))
               for x in inputs.values())  # each layer's largest difference over its largest output
    step = decoder_step(args.graph, args.threads)
    times: dict[str, dict[int, list[float]]] = {name: {rows: [] for rows in inputs} for name in calls}
    times["decoder"] = {1: []}
    names = [*calls, "decoder"]
    for r in range(args.rounds):
        for name in names[r % 3:] + names[:r % 3]:
            for rows, x in inputs.items() if name in calls else [(1, None)]:
                call = functools.partial(calls[name], x) if name in calls else step
                seconds_per_call(call, 3)
                times[name][rows].append(seconds_per_call(call, args.calls))
    print(json.dumps({name: {rows: statistics.median(v) for rows, v in by.items()} for name, by in times.items()}
                     | {"rounds": times, "max_relative_diff": diff, "layers": len(layers)}))


if __name__ == "__main__":
    main()
