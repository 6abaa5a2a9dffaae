"""A tiny decoder-only transformer with an explicit KV cache (past_* inputs, present_* outputs).

The LLM pipeline's test model, shipped so an installed tritonkit exports it.

Shapes (B batch, S new tokens, P cached tokens, L layers, H heads, D head size):
input_ids [B, S] int64, past_key/past_value [B, L, H, P, D] -> logits [B, S, V],
present_key/present_value [B, L, H, P + S, D]. Decoding feeds `present_*` back as `past_*`.
"""
import torch
from torch import nn


class Block(nn.Module):
    """Pre-norm causal self-attention and MLP over the cached plus new positions."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(
        self, x: torch.Tensor, past_k: torch.Tensor, past_v: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        scores = q @ k.transpose(-1, -2) / self.head_dim**0.5
        scores = scores.masked_fill(~mask, -1e9)
        attn = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        x = x + self.mlp(self.ln2(x))
        return x, k, v


class TinyGPT(nn.Module):
    """Embeddings, `layers` blocks and a tied LM head."""

    def __init__(self, vocab: int = 64, dim: int = 32, heads: int = 2, layers: int = 2, max_pos: int = 256) -> None:
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_pos, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)

    def forward(
        self, input_ids: torch.Tensor, past_key: torch.Tensor, past_value: torch.Tensor
    ) -> dict[str, torch.Tensor]:
        s = input_ids.shape[1]
        p = past_key.shape[3]
        positions = torch.arange(s, device=input_ids.device) + p
        x = self.tok(input_ids) + self.pos(positions)[None]
        key_positions = torch.arange(p + s, device=input_ids.device)
        mask = key_positions[None, :] <= positions[:, None]
        keys, values = [], []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past_key[:, i], past_value[:, i], mask)
            keys.append(k)
            values.append(v)
        logits = self.ln_f(x) @ self.tok.weight.T
        return {"logits": logits, "present_key": torch.stack(keys, 1), "present_value": torch.stack(values, 1)}
