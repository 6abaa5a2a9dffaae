"""A Hugging Face Llama-family causal LM (`LlamaForCausalLM`: SmolLM2, TinyLlama, ...) as a KV-cache decoder.

The wrapper reuses the model's own modules (embeddings, projections, RMSNorms, MLPs) and writes only the
attention glue the decoder contract needs (`kv_graph`): rotary embeddings at explicit positions, grouped
query attention over the padded cache, and logits at the newest token only (prefill would otherwise
compute a vocabulary-sized row per prompt token). Tests compare it with the model's own `generate`.
"""
import math
from typing import Any

from tritonkit.export import newer_ops
from tritonkit.pipelines.llm.export import kv_graph


def make_decoder(hf_model: Any) -> Any:
    """Wraps a loaded `LlamaForCausalLM` (float32, eval) into the decoder contract.

    Written for few graph nodes, since a decode step of a small model is mostly per-node overhead in
    onnxruntime (SmolLM2: ~70 nodes a layer cost more than its MatMuls): q, k and v are one MatMul, as are the
    MLP's gate and up (their rows concatenated: per-row block quantization gives the same numbers); attention
    (grouped query heads over the cache, no copy of it per head) and rotary embeddings are single ONNX ops
    (newer_ops), each residual Add with the next RMSNorm is one onnxruntime op, and shapes are built once per
    call, not per layer.
    """
    import torch
    from torch import nn
    from torch.onnx import operators

    config = hf_model.config
    rope = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"rope type '{rope_type}' is not supported by this wrapper "
                         "(only the default rotary embedding)")
    theta = float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0)))
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    groups = heads // kv_heads
    inner = config.intermediate_size
    epsilon = float(config.rms_norm_eps)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    act = getattr(config, "hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"hidden_act '{act}' is not supported by this wrapper (only silu)")

    def const(*dims: int) -> Any:
        return torch.tensor(dims, dtype=torch.int64)  # a constant of the graph (the tracer warns, rightly)

    def fused(*linears: Any) -> Any:
        """One Linear computing `linears` side by side (no bias: Llama's projections have none)."""
        if any(lin.bias is not None for lin in linears):
            raise ValueError("projections with a bias are not supported by this wrapper")
        weight = torch.cat([lin.weight for lin in linears], 0)
        out = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        out.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)
        return out

    class GroupedAttention(torch.autograd.Function):
        """Attention of q's heads [B, Hq, S, D] over their kv head's cached and new keys/values [B, Hkv, P|S, D]
        with an additive bias [B, 1, S, P + S]; exported as a Concat each for keys and values and ONNX's
        Attention (opset 23): one onnxruntime kernel where the exporter wrote a dozen nodes (scores, softmax,
        grouping reshapes)."""

        @staticmethod
        def forward(ctx: Any, q: Any, k: Any, v: Any, bias: Any, past_k: Any, past_v: Any) -> Any:
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
            grouped = q.reshape(q.shape[0], kv_heads, -1, head_dim)  # query head h uses kv head h // G
            scores = (grouped @ k.transpose(-1, -2)) / math.sqrt(head_dim) + bias.repeat(1, 1, groups, 1)
            return (torch.softmax(scores, dim=-1) @ v).reshape(q.shape)

        @staticmethod
        def symbolic(g: Any, q: Any, k: Any, v: Any, bias: Any, past_k: Any, past_v: Any) -> Any:
            # The cached and new keys/values concatenated ahead of the op, not given to it as a past: with a past
            # onnxruntime wants the present outputs (that concatenation, unused here: the caller keeps the cache)
            # and kept every layer's to the call's end (SmolLM2, one row of 288 positions and 16 new tokens: 17.6
            # MiB more at the call's peak, 38.7 against 32.9 ms; one token at 1,000 positions 22.9 against 15.4 ms)
            keys = g.op("Concat", past_k, k, axis_i=2)
            values = g.op("Concat", past_v, v, axis_i=2)
            return g.op(f"{newer_ops.DOMAIN}::Attention", q, keys, values, bias)

    class Rotary(torch.autograd.Function):
        """Rotary embedding of x [B, H, S, D] at positions [B, S] (rotate-half layout, cos/sin tables indexed by
        position); exported as ONNX's RotaryEmbedding (opset 23), one kernel for the slices, products and sum."""

        @staticmethod
        def forward(ctx: Any, x: Any, cos_table: Any, sin_table: Any, positions: Any) -> Any:
            cos, sin = cos_table[positions][:, None], sin_table[positions][:, None]  # [B, 1, S, D/2]
            x1, x2 = x[..., :head_dim // 2], x[..., head_dim // 2:]
            return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

        @staticmethod
        def symbolic(g: Any, x: Any, cos_table: Any, sin_table: Any, positions: Any) -> Any:
            return g.op(f"{newer_ops.DOMAIN}::RotaryEmbedding", x, cos_table, sin_table, positions)

    class SkipNorm(torch.autograd.Function):
        """(RMSNorm(x + skip) * weight, x + skip): the residual sum and the next norm, exported as onnxruntime's
        SkipSimplifiedLayerNormalization (one kernel for the Add and the norm's five nodes)."""

        @staticmethod
        def forward(ctx: Any, x: Any, skip: Any, weight: Any, eps: float) -> Any:
            total = x + skip
            return weight * (total * torch.rsqrt(total.pow(2).mean(-1, keepdim=True) + eps)), total

        @staticmethod
        def symbolic(g: Any, x: Any, skip: Any, weight: Any, eps: float) -> Any:
            out, _, _, total = g.op("com.microsoft::SkipSimplifiedLayerNormalization", x, skip, weight,
                                    epsilon_f=eps, outputs=4)
            return out, total

    class LlamaDecoder(nn.Module):
        """Batched steps over a Llama model's layers (kv_graph: right-padded past, left-padded new tokens)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = hf_model.model
            self.lm_head = None if tied else hf_model.lm_head
            self.qkv = nn.ModuleList(fused(layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj)
                                     for layer in self.model.layers)
            self.gate_up = nn.ModuleList(fused(layer.mlp.gate_proj, layer.mlp.up_proj) for layer in self.model.layers)
            inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
            angles = torch.arange(config.max_position_embeddings, dtype=torch.float32)[:, None] * inv_freq
            self.register_buffer("cos_table", angles.cos(), persistent=False)  # [positions, D/2]
            self.register_buffer("sin_table", angles.sin(), persistent=False)

        def forward(self, input_ids, past_length, input_length, **past_layers):
            """`past_layers`: past_key_<i> and past_value_<i> [B, H, P, D] (kv_graph's contract)."""
            batch, seq = input_ids.shape
            past = past_layers["past_key_0"].shape[2]
            positions, mask = kv_graph.positions_and_mask(seq, past, past_length, input_length)
            bias = (mask.to(torch.float32) - 1.0) * -kv_graph.MASKED  # [B, 1, S, P + S]: 0 or MASKED, added to scores
            bs = operators.shape_as_tensor(input_ids)  # [B, S]
            heads_shape = torch.cat([bs, const(heads + 2 * kv_heads, head_dim)])  # [B, S, Hq + 2 Hkv, D]
            hidden_shape = torch.cat([bs, const(heads * head_dim)])  # [B, S, Hq * D]
            layers = self.model.layers
            stacked_shape = torch.cat([bs[:1], const(len(layers), kv_heads, -1, head_dim)])  # [B, L, H, S, D]
            x = self.model.embed_tokens(input_ids)
            h = layers[0].input_layernorm(x)
            keys, values = [], []
            for i, layer in enumerate(layers):
                qkv = operators.reshape_from_tensor_shape(self.qkv[i](h), heads_shape).transpose(1, 2)
                q, k, v = qkv.split([heads, kv_heads, kv_heads], dim=1)
                q = Rotary.apply(q, self.cos_table, self.sin_table, positions)
                k = Rotary.apply(k, self.cos_table, self.sin_table, positions)
                keys.append(k)  # the new entries only (kv_graph's contract)
                values.append(v)
                past_k, past_v = past_layers[f"past_key_{i}"], past_layers[f"past_value_{i}"]
                out = GroupedAttention.apply(q, k, v, bias, past_k, past_v)
                out = operators.reshape_from_tensor_shape(out.transpose(1, 2), hidden_shape)
                h, x = SkipNorm.apply(x, layer.self_attn.o_proj(out), layer.post_attention_layernorm.weight, epsilon)
                gate_up = self.gate_up[i](h)
                gate, up = gate_up[..., :inner], gate_up[..., inner:]  # constant bounds: chunk() computes them
                mlp = layer.mlp.down_proj(torch.nn.functional.silu(gate) * up)
                if i + 1 < len(layers):
                    h, x = SkipNorm.apply(x, mlp, layers[i + 1].input_layernorm.weight, epsilon)
                else:
                    x = x + mlp
            last = self.model.norm(x[:, -1])
            head = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            logits = torch.nn.functional.linear(last, head)  # Gemm(transB): no transposed copy of a tied embedding
            # one Concat of the layers' [B, H, S, D] entries and a Reshape, where stack() wrote an Unsqueeze each
            present_key = operators.reshape_from_tensor_shape(torch.cat(keys, 1), stacked_shape)
            present_value = operators.reshape_from_tensor_shape(torch.cat(values, 1), stacked_shape)
            return {"logits": logits, "present_key": present_key, "present_value": present_value}

    return LlamaDecoder().eval()


def geometry(hf_model: Any) -> dict[str, int]:
    """layers, kv_heads, head_dim, vocab of a Llama-family config."""
    c = hf_model.config
    return {"layers": c.num_hidden_layers, "kv_heads": c.num_key_value_heads,
            "head_dim": getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads, "vocab": c.vocab_size}
