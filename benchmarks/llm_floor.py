"""The LLM serving floor for benchmarks/llm_peers.py: the served `llm` pipeline with generate's decoder replaced by
a graph that computes nothing.

The floor decoder has the real one's inputs and outputs (SmolLM2's layers, heads, vocabulary): its logits are one
constant row (a fixed token wins every greedy step) and its present keys/values its pasts as they are (bound to the
same memory, as generate binds them: onnxruntime's Identity copies nothing then). So
every hop of a served token is the real one (gRPC stream, the ensemble, generate's loop with the engine's
bookkeeping and sampling, the response) while the decoder costs ~nothing: its served tokens/s is what serving a token
costs on this server, whatever graph generate runs.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from llm import edited_repository

#: The floor's every token: SmolLM2's "=" (any id below the vocabulary size would do; ignore_eos keeps it going).
FLOOR_TOKEN = 47


def floor_decoder(real: Path, target: Path) -> None:
    """Writes at `target` a decoder graph with `real`'s inputs, outputs and shapes that computes nothing."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    session = ort.InferenceSession(str(real), providers=["CPUExecutionProvider"])
    inputs = {i.name: i for i in session.get_inputs()}
    pasts = [name for name in inputs if name.startswith(("past_key_", "past_value_"))]
    _, heads, _, head_dim = inputs["past_key_0"].shape
    vocab = session.get_outputs()[0].shape[-1]
    row = np.zeros((1, vocab), np.float32)
    row[0, FLOOR_TOKEN] = 1.0
    constants = [numpy_helper.from_array(row, "row"), numpy_helper.from_array(np.array([vocab], np.int64), "vocab")]
    presents = [name.replace("past_", "present_", 1) for name in pasts]
    nodes = [helper.make_node("Shape", ["input_ids"], ["batch"], end=1),
             helper.make_node("Concat", ["batch", "vocab"], ["logits_shape"], axis=0),
             helper.make_node("Expand", ["row", "logits_shape"], ["logits"]),
             *(helper.make_node("Identity", [past], [present]) for past, present in zip(pasts, presents))]
    cache = ["batch", heads, "past", head_dim]
    graph_inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
                    *(helper.make_tensor_value_info(name, TensorProto.FLOAT, cache) for name in pasts),
                    helper.make_tensor_value_info("past_length", TensorProto.INT64, ["batch", 1]),
                    helper.make_tensor_value_info("input_length", TensorProto.INT64, ["batch", 1])]
    graph_outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", vocab]),
                     *(helper.make_tensor_value_info(name, TensorProto.FLOAT, cache) for name in presents)]
    graph = helper.make_graph(nodes, "serving_floor", graph_inputs, graph_outputs, constants)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(target))


def floor_repository(repository: Path, target: Path) -> Path:
    """A copy of the built repository (hard links) whose generate runs the floor decoder; every config as built."""
    edited_repository(repository, target, lambda name, config: False)
    model = target / "generate" / "1" / "model.onnx"
    model.unlink()  # a hard link to the real graph: write a new file
    model.with_name("model.onnx.data").unlink(missing_ok=True)
    floor_decoder(repository / "generate" / "1" / "model.onnx", model)
    return target
