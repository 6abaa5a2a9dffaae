"""A model whose traced graph differs from eager PyTorch: verification must catch it.

The Python `if` reads a tensor value. Tracing (or any exporter that evaluates the condition on the
example) bakes in the branch the example takes; inputs without an outlier take the other branch in
eager mode, so the exported graph answers differently.
"""
from __future__ import annotations

import torch
from torch import nn


class OutlierSquash(nn.Module):
    """x [B, 8] -> y [B, 8]; squashes with tanh only when an outlier is present."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.abs().max() > 5.0:
            return torch.tanh(x)
        return x * 2.0


def build(seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The entry point `examples.models.wrong_branch:build`: the example holds an outlier."""
    torch.manual_seed(seed)
    x = torch.randn(4, 8)
    x[0, 0] = 6.0
    return OutlierSquash().eval(), (x,)
