"""The decoder graph's contract, shared by every wrapped model: batched steps over KV caches read and written in
place.

Inputs (B rows, S new tokens, C cache positions, L layers, H kv heads, D head size):
- `input_ids` int64 [B, S]: new tokens, right-padded (row r's are the first `input_length[r]`);
- `past_key_<i>`, `past_value_<i>` float32 [B, H, C, D], one pair per layer i: each row's cache, its first
  `past_length[r]` positions filled and room after them for the new tokens and one more (`past_length + S + 1 <= C`:
  see paired queries below);
- `past_length`, `input_length` int64 [B, 1]: how many of those positions are real;
- `logit_index` int64 [B, K]: which of each row's new tokens to give the logits of (indexes into its new tokens,
  clamped to its real ones): the engine asks for the last one, and for the last k + 1 when it verifies k drafted
  tokens (speculative decoding).
Outputs: `logits` float32 [B, K, V] at the tokens `logit_index` names, and `present_key_<i>`/`present_value_<i>`
[B, H, C, D]: the past with the new tokens' keys/values at positions `past_length[r]` onwards (zero after them).

Attention is onnxruntime's GroupQueryAttention (rotary embeddings inside it where the model has them): one kernel a
layer where ONNX's Attention needed a dozen nodes around it (rotary, head reshapes, the past concatenated to the new
keys), and it writes the new entries into its present outputs only. A caller that binds those outputs to the past's
own memory (the engine binds a request's cache) has them written into the cache in place, and the attention reads
only each row's filled positions, whatever the capacity: no copy of the cache into or out of a call, no cost for
the room left. SmolLM2 int4, one token after 100 positions, in process: 4.9 against 7.1 ms (docs/pipelines/llm.md).
A row without new tokens (`input_length` 0) is idle: nothing of it is written, its logits are to be ignored (the engine
runs the slots between two rows' caches so). Lengths out of range are clamped (`input_length` to 0..S, `past_length`
to 0..C-S-1), as random inputs have them.

Paired queries: onnxruntime's CPU attention multiplies a row's probabilities by the values with a kernel of its own
when the row has one query (MLAS's single-row SGEMM), whose sums round differently from the kernel every longer row
takes; int8 activations then turn the last-bit difference into logits up to ~1 apart. So a token's logits would depend
on whether it came alone (a decode step, a one-token chunk) or with others (a prefill), and greedy text on what else
was in flight. A row with one new token therefore runs a second query after it: a throwaway one (the call's padding,
or the zero position the attention's input gets after the call's), so every query goes through the same kernel. The
throwaway's keys and values land at the row's next position (`past_length + 1`), which the row's next token
overwrites and nothing reads before.
"""
import math
from typing import Any

#: Export options for the tritonkit exporter (the batch axis is added by max_batch_size > 0).
DYNAMIC_AXES = {"input_ids": {1: "seq"}, "past_key_*": {2: "past"}, "past_value_*": {2: "past"},
                "logit_index": {1: "tails"}}


def past_names(layers: int) -> list[str]:
    """The per-layer past inputs: every layer's keys, then every layer's values."""
    return [f"past_key_{i}" for i in range(layers)] + [f"past_value_{i}" for i in range(layers)]


def present_names(layers: int) -> list[str]:
    """The per-layer present outputs, in the order of `past_names`."""
    return [name.replace("past_", "present_", 1) for name in past_names(layers)]


def per_layer(past_key: Any, past_value: Any) -> dict[str, Any]:
    """{past_key_<i>, past_value_<i>} from stacked [B, L, H, C, D] keys and values (numpy or torch)."""
    layers = past_key.shape[1]
    return dict(zip(past_names(layers), [past_key[:, i] for i in range(layers)]
                    + [past_value[:, i] for i in range(layers)]))


class Lengths:
    """A call's row lengths, clamped to the contract, as torch tensors: `past` and `new` [B] int64, and what
    GroupQueryAttention takes: `query_lens` [B] int32 (new, plus the throwaway query of a paired row: see the
    module), `seqlens_k` (past + query_lens - 1) [B] int32, `total` (their largest past + query_lens, at least the
    padded chunk S + 1) int32 scalar.
    Sizes are read as tensors, so a trace keeps them dynamic. `limit`: positions the model can place (its rotary
    table's length; None: no limit), which the throwaway query's position must stay under."""

    def __init__(self, input_ids: Any, past_key: Any, past_length: Any, input_length: Any, logit_index: Any,
                 limit: int | None = None) -> None:
        import torch
        from torch.onnx import operators

        self.seq: Any = operators.shape_as_tensor(input_ids)[1]  # a tensor: the trace keeps it dynamic
        self.logit_index = logit_index
        capacity = operators.shape_as_tensor(past_key)[2]
        zero = torch.zeros_like(self.seq)
        self.new = torch.minimum(torch.maximum(input_length[:, 0], zero), self.seq)
        self.past = torch.maximum(torch.minimum(past_length[:, 0], capacity - self.seq - 1), zero)
        self.pad: Any = None  # the zero position appended to every layer's q/k/v (made by the first layer)
        paired = self.new == 1
        if limit is not None:  # the throwaway query's position must have a rotary angle
            paired = paired & (self.past + 2 <= limit)
        queries = self.new + paired.to(self.new.dtype)
        ends = torch.maximum(self.past + queries, torch.ones_like(zero))  # the op reads at least one position
        self.seqlens_k = (ends - 1).to(torch.int32)
        self.query_lens = queries.to(torch.int32)
        self.total = torch.maximum(ends.max(), self.seq + 1).to(torch.int32)  # at least the padded chunk

    def positions(self) -> Any:
        """Each new token's position [B, S] (padding continues the count)."""
        import torch

        return self.past[:, None] + torch.arange(self.seq)[None, :]

    def tails(self, x: Any) -> Any:
        """x [B, S, H] at the new tokens `logit_index` names, each clamped to the row's real ones: [B, K, H]."""
        import torch

        newest = torch.maximum(self.new - 1, torch.zeros_like(self.new))  # an idle row (no new tokens): its first
        index = torch.minimum(torch.maximum(self.logit_index, torch.zeros_like(self.logit_index)), newest[:, None])
        return torch.gather(x, 1, index[:, :, None].expand(-1, -1, x.shape[2]))


def attention(heads: int, kv_heads: int, head_dim: int) -> Any:
    """`attend(qkv, past_k, past_v, lengths, cos=None, sin=None) -> (out [B, S, heads * D], present_k, present_v)`:
    grouped query attention of packed q/k/v [B, S, (heads + 2 kv_heads) * D] over each row's cache and its new
    tokens (causal), rotating q and k at their positions by `cos`/`sin` tables [positions, D/2] (rotate-half) when
    given; exported as one com.microsoft GroupQueryAttention."""
    import torch

    groups = heads // kv_heads

    class GroupQueryAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, qkv: Any, past_k: Any, past_v: Any, past: Any, seqlens_k: Any, total: Any,
                    query_lens: Any, cos: Any, sin: Any) -> Any:
            batch, seq, _ = qkv.shape
            capacity = past_k.shape[2]
            q, k, v = (t.reshape(batch, seq, -1, head_dim).transpose(1, 2)
                       for t in qkv.split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], -1))
            positions = past[:, None] + torch.arange(seq)[None, :]  # [B, S]
            if cos is not None:
                placeable = torch.clamp(positions, max=cos.shape[0] - 1)  # padding may run past the table
                q, k = _rotate(q, placeable, cos, sin), _rotate(k, placeable, cos, sin)
            key_index = torch.arange(capacity)
            real = (torch.arange(seq)[None, :] < query_lens[:, None])  # [B, S]: written (a paired row's throwaway too)
            placed = ((key_index[None, None, :] == positions[:, :, None]) & real[:, :, None]).to(qkv.dtype)  # [B,S,C]
            kept = (key_index[None, :] < past[:, None]).to(qkv.dtype)[:, None, :, None]  # [B, 1, C, 1]
            present_k = past_k * kept + torch.einsum("bsc,bhsd->bhcd", placed, k)
            present_v = past_v * kept + torch.einsum("bsc,bhsd->bhcd", placed, v)
            keys = present_k.repeat_interleave(groups, dim=1)  # query head h uses kv head h // groups
            values = present_v.repeat_interleave(groups, dim=1)
            scores = (q @ keys.transpose(-1, -2)) / math.sqrt(head_dim)  # [B, heads, S, C]
            allowed = key_index[None, None, :] <= positions[:, :, None]  # the past and the causal new ones
            scores = scores.masked_fill(~allowed[:, None], float("-inf"))
            out = (torch.softmax(scores, dim=-1) @ values).transpose(1, 2).reshape(batch, seq, heads * head_dim)
            return out, present_k, present_v

        @staticmethod
        def symbolic(g: Any, qkv: Any, past_k: Any, past_v: Any, past: Any, seqlens_k: Any, total: Any,
                     query_lens: Any, cos: Any, sin: Any) -> Any:
            from torch import _C

            none = g.op("prim::Constant")  # an omitted optional input (as the exporter's own symbolics write one)
            none.setType(_C.OptionalType.ofTensor())
            rotary = cos is not None and not _is_none(cos)
            inputs = [qkv, none, none, past_k, past_v, seqlens_k, total, cos if rotary else none,
                      sin if rotary else none, *[none] * 7, query_lens]
            return g.op("com.microsoft::GroupQueryAttention", *inputs, num_heads_i=heads, kv_num_heads_i=kv_heads,
                        do_rotary_i=int(rotary), rotary_interleaved_i=0, outputs=3)

    def attend(qkv: Any, past_k: Any, past_v: Any, lengths: Lengths, cos: Any = None, sin: Any = None) -> Any:
        if lengths.pad is None:
            lengths.pad = torch.zeros_like(qkv[:, :1])
        padded = torch.cat([qkv, lengths.pad], 1)  # a position after the call's: a throwaway query's room
        out, present_k, present_v = GroupQueryAttention.apply(padded, past_k, past_v, lengths.past, lengths.seqlens_k,
                                                              lengths.total, lengths.query_lens, cos, sin)
        return out[:, :-1], present_k, present_v

    return attend


def _rotate(x: Any, positions: Any, cos_table: Any, sin_table: Any) -> Any:
    """Rotary embedding of x [B, H, S, D] at positions [B, S] (rotate-half layout)."""
    import torch

    cos, sin = cos_table[positions][:, None], sin_table[positions][:, None]  # [B, 1, S, D/2]
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def _is_none(value: Any) -> bool:
    node = getattr(value, "node", None)
    return node is not None and node().mustBeNone()


def example_inputs(vocab: int, layers: int, kv_heads: int, head_dim: int, *, batch: int = 2, seq: int = 5,
                   capacity: int = 12, seed: int = 0) -> dict[str, Any]:
    """A mixed batch for export and verification: row 0 decodes a full chunk after 7 cached positions, row 1
    prefills fewer tokens after 6 (their caches' unfilled positions hold noise, which no output may read); the
    logits of each row's last three new tokens."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    shape = (batch, layers, kv_heads, capacity, head_dim)
    past_length = torch.tensor([[capacity - seq - (r % 2)] for r in range(batch)], dtype=torch.int64)
    input_length = torch.tensor([[seq - (r % 2) * 2] for r in range(batch)], dtype=torch.int64)
    return {"input_ids": torch.randint(0, vocab, (batch, seq), generator=gen),
            **{name: t.contiguous() for name, t in per_layer(torch.randn(shape, generator=gen),
                                                              torch.randn(shape, generator=gen)).items()},
            "past_length": past_length, "input_length": input_length,
            "logit_index": input_length - 3 + torch.arange(3)[None, :]}


def export_options(atol: float = 1e-4, rtol: float = 1e-4, lengths: dict[str, list[int]] | None = None,
                   batch_sizes: list[int] | None = None, golden: int = 4, exporter: str = "torchscript",
                   outputs: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The `export:` section for a decoder with this contract.

    The TorchScript exporter is the default: it traces a 30-layer decoder in ~20 s where torch.export takes
    minutes, and verification at other batch sizes and lengths shows the trace kept every dim dynamic. The
    default lengths pair each `seq` with a cache that has room for it after the example's longest past (7).
    """
    verify: dict[str, Any] = {"golden_samples": golden, "lengths": lengths or {"seq": [1, 9], "past": [8, 16]}}
    if batch_sizes is not None:
        verify["batch_sizes"] = batch_sizes
    return {"exporter": exporter, "dynamic_axes": DYNAMIC_AXES,
            "tolerance": {"atol": atol, "rtol": rtol, "outputs": outputs or {}}, "verify": verify}
