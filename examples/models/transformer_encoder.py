"""A small transformer encoder with a padding mask (HF-style attention_mask: 1 = token, 0 = padding).

input_ids [B, S] int64, attention_mask [B, S] int64 -> hidden [B, S, 32], pooled [B, 32] (masked mean).
Attention is written out (no fused fast path) so eager PyTorch and the exported graph compute the same
thing at padded positions.
"""
from __future__ import annotations

import torch
from torch import nn


class EncoderLayer(nn.Module):
    """Post-norm self-attention with an additive padding mask, then a feed-forward block."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, dim))
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in self.qkv(x).split(d, -1))
        attn = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5 + bias, dim=-1) @ v
        x = self.norm1(x + self.out(attn.transpose(1, 2).reshape(b, s, d)))
        return self.norm2(x + self.ff(x))


class TransformerEncoder(nn.Module):
    """Token + position embeddings and `layers` encoder layers."""

    def __init__(self, vocab: int = 100, dim: int = 32, heads: int = 4, layers: int = 2, max_pos: int = 512) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_pos, dim)
        self.layers = nn.ModuleList(EncoderLayer(dim, heads) for _ in range(layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.tok(input_ids) + self.pos(positions)[None]
        keep = attention_mask.to(x.dtype)
        bias = (1.0 - keep)[:, None, None, :] * -1e4
        for layer in self.layers:
            x = layer(x, bias)
        pooled = (x * keep[..., None]).sum(1) / keep.sum(1, keepdim=True).clamp(min=1.0)
        return {"hidden": x, "pooled": pooled}


def build(seq: int = 12, batch: int = 3, seed: int = 0) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The entry point `examples.models.transformer_encoder:build`: rows padded to different lengths."""
    torch.manual_seed(seed)
    model = TransformerEncoder().eval()
    input_ids = torch.randint(1, model.tok.num_embeddings, (batch, seq))
    lengths = torch.tensor([seq - 3 * i for i in range(batch)]).clamp(min=1)
    attention_mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    return model, {"input_ids": input_ids * attention_mask, "attention_mask": attention_mask}
