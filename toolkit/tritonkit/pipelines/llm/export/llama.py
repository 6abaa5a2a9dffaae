"""A Hugging Face Llama-style causal LM as a KV-cache decoder: Llama (SmolLM2, TinyLlama), Qwen2, Mistral, Phi-3, Gemma.

These families share one layer (RMSNorm, rotary grouped-query attention, gated MLP) and differ only in small
switches, read from the loaded model: projection biases (Qwen2), fused q/k/v and gate/up projections (Phi-3), the
norm's weight offset (Gemma multiplies by 1 + weight), the MLP's activation (the model's own `act_fn`) and its
embedding scale (Gemma's scaled embedding module applies it). The wrapper reuses the model's own modules and
writes only the attention glue the decoder contract needs (`kv_graph`): rotary embeddings at explicit positions,
grouped query attention over the padded cache, and logits at the newest token only (prefill would otherwise
compute a vocabulary-sized row per prompt token). Tests compare it with the model's own `generate`.
"""
from typing import Any

from tritonkit.pipelines.llm.export import kv_graph

#: model_type -> what its RMSNorm adds to its weight (Gemma's norm scales by 1 + weight).
NORM_OFFSET = {"gemma": 1.0}


def check(config: Any) -> None:
    """Raises ValueError naming the setting when the config asks for what the wrapper does not compute."""
    rope = rope_parameters(config)
    rope_type = rope.get("rope_type", rope.get("type", "default"))
    if rope_type != "default":
        raise ValueError(f"rope type '{rope_type}' is not supported (only the default rotary embedding)")
    if float(rope.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", None) or 1.0)) != 1.0:
        raise ValueError("a partial rotary embedding (partial_rotary_factor < 1) is not supported")


def rope_parameters(config: Any) -> dict[str, Any]:
    """The config's rotary settings (transformers 5's rope_parameters, or the older rope_scaling)."""
    return dict(getattr(config, "rope_parameters", None) or getattr(config, "rope_scaling", None) or {})


def make_decoder(hf_model: Any) -> Any:
    """Wraps a loaded causal LM of a family above (float32, eval) into the decoder contract.

    Written for few graph nodes, since a decode step of a small model is mostly per-node overhead in
    onnxruntime (SmolLM2: ~70 nodes a layer cost more than its MatMuls): q, k and v are one MatMul, as are the
    MLP's gate and up (their rows concatenated: per-row block quantization gives the same numbers); attention with
    its rotary embeddings is one GroupQueryAttention over the packed q/k/v (kv_graph), and each residual Add with
    the next RMSNorm is one onnxruntime op.
    """
    import torch
    from torch import nn

    config = hf_model.config
    check(config)
    theta = float(rope_parameters(config).get("rope_theta", getattr(config, "rope_theta", 10000.0)))
    g = geometry(hf_model)
    heads, head_dim, inner = config.num_attention_heads, g["head_dim"], config.intermediate_size
    epsilon = float(config.rms_norm_eps)
    offset = NORM_OFFSET.get(config.model_type, 0.0)
    tied = bool(getattr(config, "tie_word_embeddings", False))

    def fused(*linears: Any) -> Any:
        """One Linear computing `linears` side by side (their biases concatenated where they have them)."""
        if len(linears) == 1:
            return linears[0]
        weight = torch.cat([lin.weight for lin in linears], 0)
        biased = any(lin.bias is not None for lin in linears)
        out = nn.Linear(weight.shape[1], weight.shape[0], bias=biased)
        out.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)
        if biased:
            out.bias = nn.Parameter(torch.cat([lin.bias if lin.bias is not None else torch.zeros(lin.out_features)
                                               for lin in linears]).detach().clone(), requires_grad=False)
        return out

    def qkv(attn: Any) -> Any:
        return fused(*([attn.qkv_proj] if hasattr(attn, "qkv_proj") else [attn.q_proj, attn.k_proj, attn.v_proj]))

    def gate_up(mlp: Any) -> Any:
        return fused(*([mlp.gate_up_proj] if hasattr(mlp, "gate_up_proj") else [mlp.gate_proj, mlp.up_proj]))

    def norm_weight(norm: Any) -> Any:
        return nn.Parameter(norm.weight.detach() + offset, requires_grad=False)

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

    attend = kv_graph.attention(heads, g["kv_heads"], head_dim)

    class Decoder(nn.Module):
        """Batched steps over the model's layers (kv_graph's contract)."""

        def __init__(self) -> None:
            super().__init__()
            self.model = hf_model.model
            self.lm_head = None if tied else hf_model.lm_head
            layers = self.model.layers
            self.qkv = nn.ModuleList(qkv(layer.self_attn) for layer in layers)
            self.gate_up = nn.ModuleList(gate_up(layer.mlp) for layer in layers)
            self.acts = [getattr(layer.mlp, "act_fn", None) or layer.mlp.activation_fn for layer in layers]
            self.post_norms = nn.ParameterList(norm_weight(layer.post_attention_layernorm) for layer in layers)
            self.input_norms = nn.ParameterList(norm_weight(layer.input_layernorm) for layer in layers)
            inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
            angles = torch.arange(config.max_position_embeddings, dtype=torch.float32)[:, None] * inv_freq
            self.register_buffer("cos_table", angles.cos(), persistent=False)  # [positions, D/2]
            self.register_buffer("sin_table", angles.sin(), persistent=False)

        def forward(self, input_ids, past_length, input_length, logit_index, **past_layers):
            """`past_layers`: past_key_<i> and past_value_<i> [B, H, C, D] (kv_graph's contract)."""
            lengths = kv_graph.Lengths(input_ids, past_layers["past_key_0"], past_length, input_length, logit_index,
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
                h, x = SkipNorm.apply(x, layer.self_attn.o_proj(out), self.post_norms[i], epsilon)
                both = self.gate_up[i](h)
                gate, up = both[..., :inner], both[..., inner:]  # constant bounds: chunk() computes them
                mlp = layer.mlp.down_proj(self.acts[i](gate) * up)
                if i + 1 < len(layers):
                    h, x = SkipNorm.apply(x, mlp, self.input_norms[i + 1], epsilon)
                else:
                    x = x + mlp
            last = self.model.norm(lengths.tails(x))
            head = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
            logits = torch.nn.functional.linear(last, head)  # Gemm(transB): no transposed copy of a tied embedding
            return {"logits": logits, **dict(zip(kv_graph.present_names(len(layers)), keys + values))}

    return Decoder().eval()


def geometry(hf_model: Any) -> dict[str, int]:
    """layers, kv_heads, head_dim, vocab of a Llama-style config."""
    c = hf_model.config
    return {"layers": c.num_hidden_layers, "kv_heads": c.num_key_value_heads,
            "head_dim": getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads, "vocab": c.vocab_size}
