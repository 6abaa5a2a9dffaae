"""A Hugging Face Llama-family causal LM (`LlamaForCausalLM`: SmolLM2, TinyLlama, ...) as a KV-cache decoder.

The wrapper reuses the model's own modules (embeddings, projections, RMSNorms, MLPs) and writes only the
attention glue the decoder contract needs (`kv_graph`): rotary embeddings at explicit positions, grouped
query attention over the padded cache, and logits at the newest token only (prefill would otherwise
compute a vocabulary-sized row per prompt token). Tests compare it with the model's own `generate`.
"""
from typing import Any

from tritonkit.pipelines.llm.export import kv_graph


def make_decoder(hf_model: Any) -> Any:
    """Wraps a loaded `LlamaForCausalLM` (float32, eval) into the decoder contract.

    Written for few graph nodes, since a decode step of a small model is mostly per-node overhead in
    onnxruntime (SmolLM2: ~70 nodes a layer cost more than its MatMuls): q, k and v are one MatMul, as are the
    MLP's gate and up (their rows concatenated: per-row block quantization gives the same numbers); attention with
    its rotary embeddings is one GroupQueryAttention over the packed q/k/v (kv_graph), and each residual Add with
    the next RMSNorm is one onnxruntime op.
    """
    import torch
    from torch import nn

    config = hf_model.config
    rope = dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"rope type '{rope_type}' is not supported by this wrapper "
                         "(only the default rotary embedding)")
    theta = float(rope.get("rope_theta", getattr(config, "rope_theta", 10000.0)))
    heads, kv_heads = config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    inner = config.intermediate_size
    epsilon = float(config.rms_norm_eps)
    tied = bool(getattr(config, "tie_word_embeddings", False))
    act = getattr(config, "hidden_act", "silu")
    if act != "silu":
        raise ValueError(f"hidden_act '{act}' is not supported by this wrapper (only silu)")

    def fused(*linears: Any) -> Any:
        """One Linear computing `linears` side by side (no bias: Llama's projections have none)."""
        if any(lin.bias is not None for lin in linears):
            raise ValueError("projections with a bias are not supported by this wrapper")
        weight = torch.cat([lin.weight for lin in linears], 0)
        out = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
        out.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)
        return out

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

    attend = kv_graph.attention(heads, kv_heads, head_dim)

    class LlamaDecoder(nn.Module):
        """Batched steps over a Llama model's layers (kv_graph's contract)."""

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
            """`past_layers`: past_key_<i> and past_value_<i> [B, H, C, D] (kv_graph's contract)."""
            lengths = kv_graph.Lengths(input_ids, past_layers["past_key_0"], past_length, input_length,
                                       limit=config.max_position_embeddings)
            layers = self.model.layers
            x = self.model.embed_tokens(input_ids)
            h = layers[0].input_layernorm(x)
            keys, values = [], []
            for i, layer in enumerate(layers):
                out, key, value = attend(self.qkv[i](h), past_layers[f"past_key_{i}"], past_layers[f"past_value_{i}"],
                                         lengths, self.cos_table, self.sin_table)
                keys.append(key)
                values.append(value)
                h, x = SkipNorm.apply(x, layer.self_attn.o_proj(out), layer.post_attention_layernorm.weight, epsilon)
                gate_up = self.gate_up[i](h)
                gate, up = gate_up[..., :inner], gate_up[..., inner:]  # constant bounds: chunk() computes them
                mlp = layer.mlp.down_proj(torch.nn.functional.silu(gate) * up)
                if i + 1 < len(layers):
                    h, x = SkipNorm.apply(x, mlp, layers[i + 1].input_layernorm.weight, epsilon)
                else:
                    x = x + mlp
            last = self.model.norm(lengths.last(x))
            head = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            logits = torch.nn.functional.linear(last, head)  # Gemm(transB): no transposed copy of a tied embedding
            return {"logits": logits, **dict(zip(kv_graph.present_names(len(layers)), keys + values))}

    return LlamaDecoder().eval()


def geometry(hf_model: Any) -> dict[str, int]:
    """layers, kv_heads, head_dim, vocab of a Llama-family config."""
    c = hf_model.config
    return {"layers": c.num_hidden_layers, "kv_heads": c.num_key_value_heads,
            "head_dim": getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads, "vocab": c.vocab_size}
