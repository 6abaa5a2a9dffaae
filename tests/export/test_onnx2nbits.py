"""onnx2nbits: weight-only quantization into onnxruntime's MatMulNBits / GatherBlockQuantized, run in onnxruntime."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from tritonkit.export.onnx2nbits import grid_blocks, quantize_graph, quantize_rows  # noqa: E402


def q4_1_blocks(rows: int, k: int, seed: int = 0) -> np.ndarray:
    """A weight [k, rows] made of GGUF Q4_1 blocks of 32 along k: d * q + m, q in 0..15, both ends used, each block
    spanning 0 as a trained model's blocks do."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 16, (rows, k // 32, 32))
    q[..., 0], q[..., 1] = 0, 15
    d = rng.uniform(0.001, 0.05, (rows, k // 32, 1)).astype(np.float32)
    m = (-d * rng.uniform(0, 15, (rows, k // 32, 1))).astype(np.float32)
    return (d * q + m).astype(np.float32).reshape(rows, k).T.copy()


def graph(weight: np.ndarray, table: np.ndarray, path: Path) -> Path:
    """y = embed(ids) @ weight and logits = embed(ids) @ table.T, as a torch export writes them."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Gather", ["table", "ids"], ["x"], name="embed"),
             helper.make_node("MatMul", ["x", "weight"], ["y"], name="proj"),
             helper.make_node("MatMul", ["x", "head"], ["logits"], name="head")]
    inits = [numpy_helper.from_array(a, n) for n, a in (("table", table), ("weight", weight), ("head", table.T.copy()))]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [None])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def run(path: Path, ids: np.ndarray) -> list[np.ndarray]:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"ids": ids})


def dequantized(weight: np.ndarray, bits: int, symmetric: bool) -> np.ndarray:
    """What the quantized weight stands for: (q - zero point) * scale, as [K, N]."""
    blocks = quantize_rows(weight.T, bits, 32, symmetric)
    zero = 2 ** (bits - 1) if blocks.zero_points is None else blocks.zero_points[..., None].astype(np.float32)
    values = (blocks.values.astype(np.float32) - zero) * blocks.scales[..., None]
    return values.reshape(weight.shape[1], -1)[:, :weight.shape[0]].T


@pytest.mark.parametrize(("bits", "symmetric"), [(4, True), (4, False), (8, True), (8, False)])
def test_blocks_stay_within_half_a_step(bits: int, symmetric: bool) -> None:
    weight = np.random.default_rng(3).standard_normal((96, 48)).astype(np.float32)
    blocks = quantize_rows(weight.T, bits, 32, symmetric)
    step = np.repeat(blocks.scales, 32, axis=1)[:, :96].T
    assert np.all(np.abs(dequantized(weight, bits, symmetric) - weight) <= step / 2 + 1e-6)


def test_the_quantized_graph_runs_in_onnxruntime_as_its_dequantized_weights(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    weight = rng.standard_normal((64, 48)).astype(np.float32)
    q = rng.integers(-127, 128, (40, 2, 32))
    q[..., 0] = 127
    table = (q * rng.uniform(0.001, 0.01, (40, 2, 1))).astype(np.float32).reshape(40, 64)   # GGUF Q8_0 rows
    src = graph(weight, table, tmp_path / "float.onnx")
    counts = quantize_graph(src, tmp_path / "q.onnx", bits=4, block_size=32, symmetric=False, embedding_bits=8)
    assert (counts.matmuls, counts.embeddings, counts.tied_heads, counts.exact_4bit) == (1, 1, 1, 0)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node]
    assert sorted(ops) == ["GatherBlockQuantized", "MatMulNBits", "MatMulNBits"]
    ids = np.array([0, 7, 39, 3], np.int64)
    y, logits = run(tmp_path / "q.onnx", ids)
    x = table[ids]   # Q8_0 rows come back exactly from the int8 embedding
    # int8 activations (accuracy_level 4) add ~1% to the dequantized weights' product
    np.testing.assert_allclose(y, x @ dequantized(weight, 4, False), rtol=0.05, atol=0.03 * np.abs(y).max())
    np.testing.assert_allclose(logits, x @ table.T, rtol=0.05, atol=0.03 * np.abs(logits).max())


def test_the_tied_head_takes_its_own_bits_when_given(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    table = rng.standard_normal((40, 64)).astype(np.float32)
    src = graph(rng.standard_normal((64, 48)).astype(np.float32), table, tmp_path / "float.onnx")
    quantize_graph(src, tmp_path / "q.onnx", bits=4, block_size=32, symmetric=True, embedding_bits=8, head_bits=4)
    bits = {n.op_type + ":" + n.name: next(a.i for a in n.attribute if a.name == "bits")
            for n in onnx.load(str(tmp_path / "q.onnx")).graph.node}
    assert bits == {"GatherBlockQuantized:embed": 8, "MatMulNBits:proj": 4, "MatMulNBits:head": 4}
    ids = np.array([0, 7, 39, 3], np.int64)
    _, logits = run(tmp_path / "q.onnx", ids)
    # the embedding's int8 rows (within 1%) times the head's int4 blocks
    np.testing.assert_allclose(logits, table[ids] @ dequantized(table.T.copy(), 4, True),
                               rtol=0.05, atol=0.05 * np.abs(logits).max())


def test_a_rescored_head_computes_its_top_logits_again_from_the_8bit_embedding(tmp_path: Path) -> None:
    """head_rescore_top_k: the tied head at int4, its top k logits replaced by the products of the embedding's 8-bit
    rows (float32, the rows the embedding's Gather reads: one table in the file), the rest the int4 head's; the
    greedy token is the 8-bit head's wherever it is among the int4 head's top k."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    vocab, width, top_k = 300, 64, 8
    q = rng.integers(-127, 128, (vocab, width // 32, 32))
    q[..., 0] = 127
    table = (q * rng.uniform(0.001, 0.01, (vocab, width // 32, 1))).astype(np.float32).reshape(vocab, width)  # Q8_0
    nodes = [helper.make_node("Gather", ["table", "ids"], ["x"], name="embed"),
             helper.make_node("MatMul", ["h", "head"], ["logits"], name="head")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [None]),
                                       helper.make_tensor_value_info("h", TensorProto.FLOAT, [None, width])],
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("logits", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(table, "table"), numpy_helper.from_array(table.T.copy(), "head")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "float.onnx"))
    counts = quantize_graph(tmp_path / "float.onnx", tmp_path / "q.onnx", bits=4, block_size=32, symmetric=True,
                            embedding_bits=8, head_rescore_top_k=top_k)
    assert counts.tied_heads == 1 and counts.embeddings == 1
    quantized = onnx.load(str(tmp_path / "q.onnx"))
    bits = sorted((n.op_type, next(a.i for a in n.attribute if a.name == "bits")) for n in quantized.graph.node
                  if n.op_type in ("MatMulNBits", "GatherBlockQuantized"))
    assert bits == [("GatherBlockQuantized", 8), ("GatherBlockQuantized", 8), ("MatMulNBits", 4)]
    assert len([t for t in quantized.graph.initializer if t.dims == [vocab, width]]) == 1   # one 8-bit table

    # the int4 logits and the top k chosen from them, as outputs too
    quantized.graph.output.extend([helper.make_tensor_value_info("head_int4", TensorProto.FLOAT, None),
                                   helper.make_tensor_value_info("head_top", TensorProto.INT64, None)])
    onnx.save(quantized, str(tmp_path / "q_traced.onnx"))
    h = rng.standard_normal((16, width)).astype(np.float32)
    x, logits, int4, top = ort.InferenceSession(str(tmp_path / "q_traced.onnx"), providers=["CPUExecutionProvider"]
                                                ).run(None, {"ids": np.arange(vocab, dtype=np.int64), "h": h})
    np.testing.assert_allclose(x, table, rtol=1e-6)   # Q8_0 rows come back (to float32 rounding): the 8-bit rows
    exact = h @ table.T
    # int8 activations (accuracy_level 4) add ~1% to the int4 weights' product
    np.testing.assert_allclose(int4, h @ dequantized(table.T.copy(), 4, True), rtol=0.05,
                               atol=0.03 * np.abs(int4).max())
    assert top.shape == (16, top_k)
    np.testing.assert_array_equal(np.sort(np.take_along_axis(int4, top, 1), 1), np.sort(int4, 1)[:, -top_k:])
    rescored = np.zeros_like(logits, dtype=bool)
    np.put_along_axis(rescored, top, True, axis=1)
    np.testing.assert_allclose(logits[rescored], exact[rescored], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(logits[~rescored], int4[~rescored])
    assert np.abs(int4 - exact).max() > 0.05   # the int4 head does differ from the table's
    assert (logits.argmax(1) == exact.argmax(1)).all()


def test_a_rescored_head_needs_an_8bit_embedding() -> None:
    from pydantic import ValidationError

    from tritonkit.spec.export import QuantizeSpec

    assert QuantizeSpec.model_validate({"head_rescore_top_k": 64}).head_rescore_top_k == 64
    with pytest.raises(ValidationError, match="set embedding: int8 or head_rescore_top_k: 0"):
        QuantizeSpec.model_validate({"embedding": "int4", "head_rescore_top_k": 64})


def test_weights_already_in_4bit_blocks_are_found_and_put_back_exactly() -> None:
    weight = q4_1_blocks(48, 64)
    found = grid_blocks(weight.T, 32)
    assert found is not None
    blocks, remainders = found
    assert blocks.zero_points is not None
    put_back = ((blocks.values.astype(np.float32) - blocks.zero_points[..., None]) * blocks.scales[..., None]
                + remainders[..., None])
    np.testing.assert_allclose(put_back.reshape(48, 64).T, weight, rtol=0, atol=1e-6)
    assert grid_blocks(weight.T, 64) is None   # two blocks of 32 on different grids are no block of 64
    assert grid_blocks(np.random.default_rng(4).standard_normal((48, 64)).astype(np.float32), 32) is None
    assert grid_blocks(weight.T[:, :48], 32) is None   # K not a whole number of blocks


def test_the_zero_points_leave_at_most_half_a_step_of_a_block_that_spans_zero() -> None:
    """Blocks whose least value is below 0 and greatest above it keep little of their offset beside the integer zero
    point: the 4-bit remainders' error is a small share of a small value."""
    found = grid_blocks(q4_1_blocks(48, 64, seed=6).T, 32)
    assert found is not None
    blocks, remainders = found
    assert np.all(np.abs(remainders) <= blocks.scales / 2 + 1e-6)


def test_4bit_blocks_keep_their_levels_at_int4(tmp_path: Path) -> None:
    """A Q4_1 weight at int4: one MatMulNBits of its levels with integer zero points and, against x's block sums
    appended to x, the rest of its blocks' offsets at 4 bits, so the product equals the float weight's up to the int8
    activations and those remainders; re-quantizing it onto an integer grid (as before) moved it more."""
    rng = np.random.default_rng(5)
    weight, table = q4_1_blocks(48, 64), rng.standard_normal((40, 64)).astype(np.float32)
    src = graph(weight, table, tmp_path / "float.onnx")
    counts = quantize_graph(src, tmp_path / "q.onnx", bits=4, block_size=32, symmetric=False, embedding_bits=None)
    assert (counts.matmuls, counts.exact_4bit) == (1, 1)
    ops = sorted(n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node)
    assert ops == ["Concat", "Gather", "MatMul", "MatMul", "MatMulNBits"]   # block sums, float head
    ids = np.arange(40, dtype=np.int64)
    (y, _), x = run(tmp_path / "q.onnx", ids), table[ids]
    exact = np.linalg.norm(y - x @ weight) / np.linalg.norm(x @ weight)
    regridded = np.linalg.norm(x @ dequantized(weight, 4, False) - x @ weight) / np.linalg.norm(x @ weight)
    assert exact < 0.01 and exact < regridded / 3, (exact, regridded)


def wide_graph(weight: np.ndarray, x_shape: list[int | str] | None, path: Path) -> Path:
    """y = x @ weight with x a graph input of shape `x_shape` (None: no shape declared, so no rank to infer)."""
    from onnx import TensorProto, helper, numpy_helper

    g = helper.make_graph([helper.make_node("MatMul", ["x", "weight"], ["y"], name="down_proj")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(weight, "weight")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize(("x_shape", "summed"), [([1, "tokens", 1536], True), (["tokens", 1536], True), (None, False)])
def test_wide_block_sums_are_summed_from_a_reshape(tmp_path: Path, x_shape: list[int | str] | None,
                                                                  summed: bool) -> None:
    """A 1536-wide input's block sums: a Reshape and a ReduceSum (its 0/1 columns would be 295 KB), at x's rank, with
    the same product as the MatMul by columns gives; x of unknown rank keeps the MatMul."""
    weight = q4_1_blocks(64, 1536, seed=7)
    src = wide_graph(weight, x_shape, tmp_path / "float.onnx")
    counts = quantize_graph(src, tmp_path / "q.onnx", bits=4, block_size=32, symmetric=True, embedding_bits=None,
                            always_external=True)
    assert counts.exact_4bit == 1
    ops = sorted(n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node)
    sums = ["Constant", "Constant", "ReduceSum", "Reshape"] if summed else ["MatMul"]
    assert ops == sorted(["Concat", "MatMulNBits", *sums])
    rank = 3 if x_shape is None else len(x_shape)
    x = np.random.default_rng(8).standard_normal((1, 5, 1536)[-rank:]).astype(np.float32)
    session = ort.InferenceSession(str(tmp_path / "q.onnx"), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"x": x})
    assert y.shape == (*x.shape[:-1], 64)
    assert np.linalg.norm(y - x @ weight) / np.linalg.norm(x @ weight) < 0.01


def test_plain_int4_rounding_moves_weights_that_are_not_on_a_grid(tmp_path: Path) -> None:
    """The measure above is not vacuous: Gaussian weights at int4 change the output by several percent."""
    rng = np.random.default_rng(2)
    weight = rng.standard_normal((64, 48)).astype(np.float32)
    table = rng.standard_normal((40, 64)).astype(np.float32)
    src = graph(weight, table, tmp_path / "float.onnx")
    quantize_graph(src, tmp_path / "q.onnx", bits=4, block_size=32, symmetric=True, embedding_bits=None)
    ids = np.arange(40, dtype=np.int64)
    y, _ = run(tmp_path / "q.onnx", ids)
    ref, _ = run(src, ids)
    assert 0.02 < np.linalg.norm(y - ref) / np.linalg.norm(ref) < 0.3
    assert "Gather" in [n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node]   # embedding kept float
