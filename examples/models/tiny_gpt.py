"""The tiny GPT of the LLM pipeline (`tritonkit.pipelines.llm.export.tiny_gpt`) as a plain export example."""
from __future__ import annotations

import torch
from torch import nn

from tritonkit.pipelines.llm.export.tiny_gpt import TinyGPT


def build(seq: int = 5, past: int = 7, batch: int = 2, seed: int = 0) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """The entry point `examples.models.tiny_gpt:build`: a decode step with `past` cached tokens."""
    torch.manual_seed(seed)
    model = TinyGPT().eval()
    block = model.blocks[0]
    cache_shape = (batch, len(model.blocks), block.heads, past, block.head_dim)
    inputs = {
        "input_ids": torch.randint(0, model.tok.num_embeddings, (batch, seq)),
        "past_key": torch.randn(cache_shape),
        "past_value": torch.randn(cache_shape),
    }
    return model, inputs
