"""ONNX float32 -> weight-only quantized ONNX: onnxruntime's MatMulNBits for MatMul weights, GatherBlockQuantized
for token embeddings (4 or 8 bits, blocks of `block_size` along the reduced axis, integer zero points).

Weights are quantized block by block here rather than by onnxruntime's `MatMulNBitsQuantizer`, which leaves a
tied LM head at the weights' bits and offers no 8-bit embedding: SmolLM2's head (its Q8_0 embedding) at int4 moved
the logits by up to 14. MatMulNBits runs with accuracy_level 4 (activations to int8 per block, int8 dot products):
the fast CPU path. Measured (one [1, 576] x [576, 1536] MatMul, one thread, loaded machine): float32 128 us, int4
symmetric 71 us, int4 with integer zero points 117 us, int4 with float zero points 6,011 us.

Weights that already are 4-bit blocks (a GGUF Q4_1 model dequantized: each block d * q + m, q in 0..15, its least
value at q = 0 and its greatest at q = 15) keep their levels at int4 instead of being re-quantized onto another grid
(which adds up to half a step of error per weight: SmolLM2's greedy agreement fell to 0.64-0.71). Float zero points
would hold them, but onnxruntime 1.32 runs those on a slow reference path; so q goes to a MatMulNBits with each
block's nearest integer zero point z = round(-m / d) (the fast path: d * (q - z)), and what that leaves of the
block's offset, r = m + z * d (at most half a step where the block spans 0), rides in the same MatMulNBits: x's block
sums are appended to x (a Concat) and the remainders are extra 4-bit blocks of the weight, one row per block sum.
SmolLM2 stepped 0.77x as long a token as with each whole offset m + 8d a float32 product beside symmetric levels
(two MatMuls and an Add beside each MatMulNBits, 13 MB of offsets read a step; 25 alternating rounds, in process),
with greedy agreement 0.98 and perplexity x1.009 against 0.969 and x1.004. The block sums are a MatMul by 0/1
columns where those are small, and a Reshape to blocks and a ReduceSum where reading them costs more than the extra
node: SmolLM2's MLP down projection (1536 wide, 295 KB of columns) stepped 5.56 against 5.87 ms a token that way,
its 576-wide inputs 0.09 ms slower (9 alternating rounds, in process).

A tied head may run at int4 with its top k logits computed again from the embedding's 8-bit rows
(`head_rescore_top_k`, see _rescored_head): SmolLM2's head is a third of an int8 step's bytes.
"""
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit.export.onnx_files import save_onnx

#: MatMulNBits' compute: 4 = int8 activations and dot products (see above).
ACCURACY_LEVEL = 4
#: A weight is on its blocks' 16 levels when each value is within this share of a level step of one (float32
#: rounding; a weight quantized afresh is up to half a step off).
GRID_TOLERANCE = 1e-3
#: Block sums are summed from a reshape rather than multiplied by 0/1 columns above this many bytes of columns.
MOST_SUM_COLUMN_BYTES = 64 << 10
#: Above this the graph keeps its weights in model.onnx.data (protobuf's 2 GB limit, with headroom).
INLINE_LIMIT = 1_900_000_000


@dataclass(frozen=True)
class Blocks:
    """One weight as blocks: quantized values [rows, blocks, block_size] (uint8), scales and zero points."""

    values: np.ndarray
    scales: np.ndarray
    zero_points: np.ndarray | None  # uint8 [rows, blocks] (asymmetric), None: the op's default (symmetric)


def quantize_rows(rows: np.ndarray, bits: int, block_size: int, symmetric: bool) -> Blocks:
    """Quantizes each row of [rows, K] in blocks along K (the last block zero-padded)."""
    count, k = rows.shape
    padded = np.zeros((count, -(-k // block_size) * block_size), np.float32)
    padded[:, :k] = rows
    blocks = padded.reshape(count, -1, block_size)
    if symmetric:
        half = 2 ** (bits - 1)
        scales = np.abs(blocks).max(-1) / (half - 1)
        scales[scales == 0] = 1.0
        values = np.clip(np.round(blocks / scales[..., None]), 1 - half, half - 1) + half
        return Blocks(values.astype(np.uint8), scales.astype(np.float32), None)
    top = 2**bits - 1
    low, high = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)   # 0 stays exact (padding)
    scales = (high - low) / top
    scales[scales == 0] = 1.0
    zero = np.clip(np.round(-low / scales), 0, top)
    values = np.clip(np.round(blocks / scales[..., None]) + zero[..., None], 0, top)
    return Blocks(values.astype(np.uint8), scales.astype(np.float32), zero.astype(np.uint8))


def pack(values: np.ndarray, bits: int) -> np.ndarray:
    """uint8 values along the last axis, two 4-bit values a byte (low nibble first) when bits is 4."""
    if bits == 8:
        return values
    if values.shape[-1] % 2:
        values = np.concatenate([values, np.zeros((*values.shape[:-1], 1), np.uint8)], axis=-1)
    return (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)


def grid_blocks(rows: np.ndarray, block_size: int) -> tuple[Blocks, np.ndarray] | None:
    """When every block of [rows, K] along K already holds only the 16 levels min + i * (max - min) / 15 (weights
    dequantized from 4-bit blocks), those levels as 4-bit blocks with each block's nearest integer zero point, and
    what that zero point leaves of the block's offset [rows, blocks], so that value = scale * (level - zero point) +
    remainder exactly; else None."""
    count, k = rows.shape
    if k % block_size:
        return None
    blocks = rows.reshape(count, -1, block_size).astype(np.float32)
    low, high = blocks.min(-1), blocks.max(-1)
    step = (high - low) / 15
    levels = np.round((blocks - low[..., None]) / np.where(step == 0, 1, step)[..., None])
    off_grid = np.abs(levels * step[..., None] + low[..., None] - blocks) > GRID_TOLERANCE * step[..., None]
    if off_grid.any():
        return None
    zero = np.clip(np.round(-low / np.where(step == 0, 1, step)), 0, 15)
    return Blocks(levels.astype(np.uint8), step, zero.astype(np.uint8)), low + zero * step


@dataclass
class Counts:
    """What was quantized, for the build's report."""

    matmuls: int = 0
    embeddings: int = 0
    tied_heads: int = 0
    #: of `matmuls`, those whose weights already were 4-bit blocks, their levels carried over (see the module's
    #: docstring)
    exact_4bit: int = 0


def _nbits(x: str, blocks: Blocks, bits: int, shape: tuple[int, int], block_size: int, name: str, output: str,
           add: Any) -> Any:
    """A MatMulNBits node: x [..., K] times the blocks of a [K, N] weight (`shape`), with their zero points if any."""
    from onnx import helper

    inputs = [x, add(f"{name}_q", pack(blocks.values, bits)), add(f"{name}_s", blocks.scales.reshape(-1))]
    if blocks.zero_points is not None:
        inputs.append(add(f"{name}_z", pack(blocks.zero_points, bits).reshape(-1)))
    return helper.make_node("MatMulNBits", inputs, [output], name=name, domain="com.microsoft", K=shape[0],
                            N=shape[1], bits=bits, block_size=block_size, accuracy_level=ACCURACY_LEVEL)


def _matmul_nbits(node: Any, weight: np.ndarray, bits: int, block_size: int, symmetric: bool, add: Any) -> Any:
    k, n = weight.shape
    return _nbits(node.input[0], quantize_rows(weight.T, bits, block_size, symmetric), bits, (k, n), block_size,
                  node.name, node.output[0], add)


def _exact_4bit(node: Any, weight: np.ndarray, block_size: int, add: Any, with_sums: Any) -> list[Any] | None:
    """`node` as one MatMulNBits of `weight`'s 4-bit blocks (levels, scales, integer zero points) and, as extra
    blocks read against x's appended block sums, the rest of the blocks' offsets at 4 bits, when its weight already is
    4-bit blocks of `block_size` (see grid_blocks); else None."""
    found = grid_blocks(weight.T, block_size)
    if found is None:
        return None
    levels, remainders = found
    rest = quantize_rows(remainders, 4, block_size, symmetric=True)
    assert levels.zero_points is not None
    both = Blocks(np.concatenate([levels.values, rest.values], axis=1),
                  np.concatenate([levels.scales, rest.scales], axis=1),
                  np.concatenate([levels.zero_points, np.full(rest.scales.shape, 8, np.uint8)], axis=1))
    k, n = weight.shape
    return [_nbits(with_sums(node.input[0], k), both, 4, (k + k // block_size, n), block_size, node.name,
                   node.output[0], add)]


def _table_blocks(name: str, table: np.ndarray, bits: int, block_size: int, add: Any) -> list[str] | None:
    """A token embedding [rows, width] as GatherBlockQuantized's data, scales and zero points (symmetric, the
    initializers' names), or None when its rows are not whole blocks (the op needs them)."""
    blocks = quantize_rows(table, bits, block_size, symmetric=True)
    rows, width = table.shape
    data = pack(blocks.values, bits).reshape(rows, -1)
    if data.shape[1] * 8 // bits != width or (bits == 4 and blocks.scales.shape[-1] % 2):
        return None
    zero_points = pack(np.full(blocks.scales.shape, 2 ** (bits - 1), np.uint8), bits)
    name = f"{name}_{bits}bit"
    return [add(f"{name}_q", data), add(f"{name}_s", blocks.scales), add(f"{name}_z", zero_points)]


def _gather_block(node: Any, table: list[str], bits: int, block_size: int) -> Any:
    from onnx import helper

    data, scales, zero_points = table
    return helper.make_node("GatherBlockQuantized", [data, node.input[1], scales, zero_points], list(node.output),
                            name=node.name, domain="com.microsoft", bits=bits, block_size=block_size, gather_axis=0,
                            quantize_axis=1)


def _rescored_head(node: Any, weight: np.ndarray, table: list[str], table_bits: int, top_k: int, block_size: int,
                   add: Any) -> list[Any]:
    """A tied LM head as int4 logits (symmetric blocks: the fast path) whose `top_k` largest are computed again
    from the embedding's `table_bits` rows (`table`, as GatherBlockQuantized holds them) in float32 and written over
    them: the head reads half the bytes, and the logits that sampling picks from are the 8-bit table's."""
    from onnx import helper

    name, x, k, n = node.name, node.input[0], *weight.shape
    approx, top, rows = f"{name}_int4", f"{name}_top", f"{name}_top_rows"
    top_k_name, last_axis = f"{name}_top_k", f"{name}_last_axis"
    data, scales, zero_points = table
    return [_nbits(x, quantize_rows(weight.T, 4, block_size, symmetric=True), 4, (k, n), block_size, approx, approx,
                   add),
            _constant(top_k_name, np.array([min(top_k, n)], np.int64)), _constant(last_axis, np.array([-1], np.int64)),
            helper.make_node("TopK", [approx, top_k_name], [f"{top}_values", top], name=top, axis=-1),
            helper.make_node("GatherBlockQuantized", [data, top, scales, zero_points], [rows], name=rows,
                             domain="com.microsoft", bits=table_bits, block_size=block_size, gather_axis=0,
                             quantize_axis=1),
            helper.make_node("Unsqueeze", [x, last_axis], [f"{name}_x_column"], name=f"{name}_x_column"),
            helper.make_node("MatMul", [rows, f"{name}_x_column"], [f"{name}_rescored_column"],
                             name=f"{name}_rescored_column"),
            helper.make_node("Squeeze", [f"{name}_rescored_column", last_axis], [f"{name}_rescored"],
                             name=f"{name}_rescored"),
            helper.make_node("ScatterElements", [approx, top, f"{name}_rescored"], list(node.output), name=name,
                             axis=-1)]


def _constant(name: str, array: np.ndarray) -> Any:
    """A Constant node (it stays in model.onnx, where onnxruntime reads it at load, not in the external data)."""
    from onnx import helper, numpy_helper

    return helper.make_node("Constant", [], [name], name=name, value=numpy_helper.from_array(array, name))


def _ranks(model: Any) -> dict[str, int]:
    """Each value's rank where ONNX's shape inference finds one, inferred without the weights' bytes (their shapes
    are enough; copying a 600 MB graph to infer on it is not)."""
    from onnx import shape_inference

    held = [(t, t.raw_data) for t in model.graph.initializer if t.HasField("raw_data")]
    for tensor, _ in held:
        tensor.ClearField("raw_data")
    try:
        inferred = shape_inference.infer_shapes(model)
    finally:
        for tensor, data in held:
            tensor.raw_data = data
    return {v.name: len(v.type.tensor_type.shape.dim) for v in (*inferred.graph.input, *inferred.graph.value_info)
            if v.type.tensor_type.HasField("shape")}


def quantize_graph(src: Path, dst: Path, bits: int, block_size: int, symmetric: bool,
                   embedding_bits: int | None, always_external: bool = False, exact_4bit: bool = True,
                   head_bits: int | None = None, head_rescore_top_k: int = 0) -> Counts:
    """Writes `dst` with every MatMul by a 2-D float initializer as MatMulNBits (`bits`) and every Gather from a
    2-D float initializer (a token embedding) as GatherBlockQuantized (`embedding_bits`, None: kept float); a MatMul
    by the embedding's transpose (a tied LM head) gets `embedding_bits` too, or `head_bits` when given. Other nodes
    are left as they are. `exact_4bit=False` re-quantizes weights that already are 4-bit blocks too, and `head_bits`
    quantizes the head apart from the embedding (both for benchmarks/llm_weights.py: onnxruntime-genai's choices).
    `head_rescore_top_k` > 0 (with `embedding_bits` 8): the tied head at int4, its top k logits computed again from
    the embedding's rows (see _rescored_head)."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    weights = {t.name: t for t in graph.initializer}
    added: list[Any] = []

    def add(name: str, array: np.ndarray) -> str:
        added.append(numpy_helper.from_array(array, name))
        return name

    def float_2d(name: str) -> np.ndarray | None:
        tensor = weights.get(name)
        if tensor is None or tensor.data_type != onnx.TensorProto.FLOAT or len(tensor.dims) != 2:
            return None
        return numpy_helper.to_array(tensor)

    embeddings = {n.input[0]: t for n in graph.node
                  if n.op_type == "Gather" and (t := float_2d(n.input[0])) is not None}
    # an embedding's quantized rows, made once: its Gather and a head rescored from it read the same initializers
    table_blocks = functools.cache(lambda name, bits: _table_blocks(name, embeddings[name], bits, block_size, add))
    counts, nodes, replaced = Counts(), list[Any](), set[str]()
    joined, ones = dict[str, str](), dict[int, str]()
    ranks = functools.cache(lambda: _ranks(model))   # shape inference runs once, when a first wide input needs it

    def block_sums(name: str, k: int) -> str:
        """x's sums over each block of `block_size` along its last axis (with_block_sums makes them once per x): a
        MatMul by 0/1 columns, or, when those are large and x's rank is known, a Reshape to [..., blocks, block_size]
        and a ReduceSum."""
        out = f"{name}_block_sums"
        blocks = k // block_size
        x_rank = ranks().get(name) if k * blocks * 4 > MOST_SUM_COLUMN_BYTES else None
        if x_rank is not None:
            # shapes as Constant nodes: they stay in model.onnx, where onnxruntime reads them at load
            shape = np.array([0] * (x_rank - 1) + [blocks, block_size], np.int64)
            nodes.extend([_constant(f"{out}_shape", shape), _constant(f"{out}_axis", np.array([-1], np.int64)),
                          helper.make_node("Reshape", [name, f"{out}_shape"], [f"{out}_blocks"], name=f"{out}_reshape"),
                          helper.make_node("ReduceSum", [f"{out}_blocks", f"{out}_axis"], [out], name=out,
                                           keepdims=0)])
            return out
        if k not in ones:
            columns = np.zeros((k, blocks), np.float32)
            columns[np.arange(k), np.arange(k) // block_size] = 1
            ones[k] = add(f"block_ones_{k}", columns)
        nodes.append(helper.make_node("MatMul", [name, ones[k]], [out], name=out))
        return out

    def with_block_sums(name: str, k: int) -> str:
        """x with its block sums appended along its last axis, made once."""
        if name not in joined:
            joined[name] = out = f"{name}_with_block_sums"
            nodes.append(helper.make_node("Concat", [name, block_sums(name, k)], [out], name=out, axis=-1))
        return joined[name]

    for node in graph.node:
        new: list[Any] | None = None
        weight = float_2d(node.input[1]) if node.op_type == "MatMul" and node.input[0] not in weights else None
        if weight is not None:
            tied = next((name for name, e in embeddings.items()
                         if e.shape == weight.shape[::-1] and np.array_equal(e, weight.T)), None)
            node_bits = (head_bits or embedding_bits) if tied else bits
            if node_bits == 4 and not tied and exact_4bit:
                new = _exact_4bit(node, weight, block_size, add, with_block_sums)
                counts.exact_4bit += new is not None
            if tied and head_rescore_top_k and node_bits == 8 and (table := table_blocks(tied, 8)) is not None:
                new = _rescored_head(node, weight, table, node_bits, head_rescore_top_k, block_size, add)
            if new is None and node_bits is not None:
                new = [_matmul_nbits(node, weight, node_bits, block_size, symmetric or tied is not None, add)]
            if new is not None:
                counts.tied_heads += tied is not None
                counts.matmuls += tied is None
        elif (node.op_type == "Gather" and embedding_bits is not None and node.input[0] in embeddings
              and all(a.i == 0 for a in node.attribute if a.name == "axis")):
            table = table_blocks(node.input[0], embedding_bits)
            new = None if table is None else [_gather_block(node, table, embedding_bits, block_size)]
            counts.embeddings += new is not None
        if new is not None:
            replaced.update(name for name in node.input if name in weights)
        nodes.extend(new or [node])
    still_used = {name for n in nodes for name in n.input}
    keep = [t for t in graph.initializer if t.name not in replaced or t.name in still_used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(keep + added)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    save_onnx(model, dst, always_external or model.ByteSize() > INLINE_LIMIT)
    return counts
