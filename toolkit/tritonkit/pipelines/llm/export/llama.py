"""A Hugging Face Llama-family causal LM (`LlamaForCausalLM`: SmolLM2, TinyLlama, ...) as a KV-cache decoder.

The wrapper reuses the model's own modules (embeddings, projections, RMSNorms, MLPs) and writes only the
attention glue the decoder contract needs (`kv_graph`): rotary embeddings at explicit positions, grouped
query attention over the left-padded cache, and logits at the newest token only (prefill would otherwise
compute a vocabulary-sized row per prompt token). Tests compare it with the model's own `generate`.
"""
from __future__ import annotations

import math
from typing import Any

from tritonkit.pipelines.llm.export import kv_graph


def _rotate_half(x: Any) -> Any:
    import torch

    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def make_decoder(hf_model: Any) -> Any:
    """Wraps a loaded `LlamaForCausalLM` (float32, eval) into the decoder contract."""
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
    tied = bool(getattr(config, "tie_word_embeddings", False))

    class LlamaDecoder(nn.Module):
        """Left-padded batched steps over a Llama model's layers."""

        def __init__(self) -> None:
            super().__init__()
            self.model = hf_model.model
            self.lm_head = None if tied else hf_model.lm_head
            inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
            self.register_buffer("inv_freq", inv_freq, persistent=False)

        def forward(self, input_ids, past_key, past_value, past_length, input_length):
            batch, seq = input_ids.shape
            past = past_key.shape[3]
            positions, mask = kv_graph.positions_and_mask(seq, past, past_length, input_length)
            freqs = positions[..., None].to(torch.float32) * self.inv_freq  # [B, S, D/2]
            angles = torch.cat((freqs, freqs), dim=-1)[:, None]  # [B, 1, S, D]
            cos, sin = angles.cos(), angles.sin()
            x = self.model.embed_tokens(input_ids)
            keys, values = [], []
            for i, layer in enumerate(self.model.layers):
                attn = layer.self_attn
                h = layer.input_layernorm(x)
                q = attn.q_proj(h).view(batch, seq, heads, head_dim).transpose(1, 2)
                k = attn.k_proj(h).view(batch, seq, kv_heads, head_dim).transpose(1, 2)
                v = attn.v_proj(h).view(batch, seq, kv_heads, head_dim).transpose(1, 2)
                q = q * cos + _rotate_half(q) * sin
                k = k * cos + _rotate_half(k) * sin
                k = torch.cat([past_key[:, i], k], dim=2)
                v = torch.cat([past_value[:, i], v], dim=2)
                keys.append(k)
                values.append(v)
                k_all = k.repeat_interleave(heads // kv_heads, dim=1)
                v_all = v.repeat_interleave(heads // kv_heads, dim=1)
                scores = (q @ k_all.transpose(-1, -2)) / math.sqrt(head_dim)
                scores = scores.masked_fill(~mask, kv_graph.MASKED)
                out = torch.softmax(scores, dim=-1) @ v_all
                x = x + attn.o_proj(out.transpose(1, 2).reshape(batch, seq, heads * head_dim))
                x = x + layer.mlp(layer.post_attention_layernorm(x))
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
