"""A Hugging Face Llama-family causal LM (`LlamaForCausalLM`: SmolLM2, TinyLlama, ...) as a KV-cache decoder.

The wrapper reuses the model's own modules (embeddings, projections, RMSNorms, MLPs) and writes only the
attention glue the decoder contract needs (`kv_graph`): rotary embeddings at explicit positions, grouped
query attention over the left-padded cache, and logits at the newest token only (prefill would otherwise
compute a vocabulary-sized row per prompt token). Tests compare it with the model's own `generate`.
"""
import math
from typing import Any

from tritonkit.pipelines.llm.export import kv_graph


def _rotation(head_dim: int) -> Any:
    """R with x @ R = cat(-x[half:], x[:half]) (rotate_half as one exact MatMul: a single +-1 per column)."""
    import torch

    half = head_dim // 2
    r = torch.zeros(head_dim, head_dim)
    r[half:, :half] = -torch.eye(half)
    r[:half, half:] = torch.eye(half)
    return r


def make_decoder(hf_model: Any) -> Any:
    """Wraps a loaded `LlamaForCausalLM` (float32, eval) into the decoder contract.

    Written for few graph nodes, since a decode step of a small model is mostly per-node overhead in
    onnxruntime (SmolLM2: ~70 nodes a layer cost more than its MatMuls): q, k and v are one MatMul, as are the
    MLP's gate and up (their rows concatenated: per-row block quantization gives the same numbers), rotary
    embeddings run on q and k together, grouped query attention folds q's heads onto their kv head instead of
    repeating the cache, and shapes are built once per call, not per layer.
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
    tied = bool(getattr(config, "tie_word_embeddings", False))
    act = getattr(config, "hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"hidden_act '{act}' is not supported by this wrapper (only silu)")

    rotation = _rotation(head_dim)  # a constant of the graph

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

    class LlamaDecoder(nn.Module):
        """Left-padded batched steps over a Llama model's layers."""

        def __init__(self) -> None:
            super().__init__()
            self.model = hf_model.model
            self.lm_head = None if tied else hf_model.lm_head
            self.qkv = nn.ModuleList(fused(layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj)
                                     for layer in self.model.layers)
            self.gate_up = nn.ModuleList(fused(layer.mlp.gate_proj, layer.mlp.up_proj) for layer in self.model.layers)
            inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def forward(self, input_ids, past_key, past_value, past_length, input_length):
            batch, seq = input_ids.shape
            past = past_key.shape[3]
            positions, mask = kv_graph.positions_and_mask(seq, past, past_length, input_length)
            freqs = positions[..., None].to(torch.float32) * self.inv_freq  # [B, S, D/2]
            angles = torch.cat((freqs, freqs), dim=-1)[:, None]  # [B, 1, S, D]
            cos, sin = angles.cos(), angles.sin()
            mask = mask.repeat(1, 1, groups, 1)  # [B, 1, G * S, P + S]: a kv head's G query heads, one after another
            bs = operators.shape_as_tensor(input_ids)  # [B, S]
            heads_shape = torch.cat([bs, const(heads + 2 * kv_heads, head_dim)])  # [B, S, Hq + 2 Hkv, D]
            grouped_shape = torch.cat([bs[:1], const(kv_heads, -1, head_dim)])  # [B, Hkv, G * S, D]
            split_shape = torch.cat([bs[:1], const(heads, -1, head_dim)])  # [B, Hq, S, D]
            hidden_shape = torch.cat([bs, const(heads * head_dim)])  # [B, S, Hq * D]
            x = self.model.embed_tokens(input_ids)
            keys, values = [], []
            for i, layer in enumerate(self.model.layers):
                h = layer.input_layernorm(x)
                qkv = operators.reshape_from_tensor_shape(self.qkv[i](h), heads_shape).transpose(1, 2)
                qk, v = qkv[:, :heads + kv_heads], qkv[:, heads + kv_heads:]
                qk = qk * cos + (qk @ rotation) * sin
                q, k = qk[:, :heads], qk[:, heads:]
                keys.append(k)  # the new entries only (kv_graph's contract)
                values.append(v)
                k = torch.cat([past_key[:, i], k], dim=2)
                v = torch.cat([past_value[:, i], v], dim=2)
                q = operators.reshape_from_tensor_shape(q, grouped_shape)  # query head h uses kv head h // G
                scores = (q @ k.transpose(-1, -2)) / math.sqrt(head_dim)
                scores = scores.masked_fill(~mask, kv_graph.MASKED)
                out = operators.reshape_from_tensor_shape(torch.softmax(scores, dim=-1) @ v, split_shape)
                out = operators.reshape_from_tensor_shape(out.transpose(1, 2), hidden_shape)
                x = x + layer.self_attn.o_proj(out)
                gate_up = self.gate_up[i](layer.post_attention_layernorm(x))
                gate, up = gate_up[..., :inner], gate_up[..., inner:]  # constant bounds: chunk() computes them
                x = x + layer.mlp.down_proj(torch.nn.functional.silu(gate) * up)
            last = self.model.norm(x[:, -1])
            head = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            logits = torch.nn.functional.linear(last, head)  # Gemm(transB): no transposed copy of a tied embedding
            return {"logits": logits, "present_key": torch.stack(keys, 1), "present_value": torch.stack(values, 1)}

    return LlamaDecoder().eval()


def geometry(hf_model: Any) -> dict[str, int]:
    """layers, kv_heads, head_dim, vocab of a Llama-family config."""
    c = hf_model.config
    return {"layers": c.num_hidden_layers, "kv_heads": c.num_key_value_heads,
            "head_dim": getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads, "vocab": c.vocab_size}
