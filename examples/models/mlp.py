"""A two-layer MLP: the smallest model with a dynamic batch axis."""
from __future__ import annotations

import torch
from torch import nn


class MLP(nn.Module):
    """features [B, 16] -> scores [B, 4]."""

    def __init__(self, in_features: int = 16, hidden: int = 32, out_features: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden), nn.GELU(), nn.Linear(hidden, out_features))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.net(features)


def build(hidden: int = 32, seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The entry point `examples.models.mlp:build`."""
    torch.manual_seed(seed)
    model = MLP(hidden=hidden).eval()
    return model, (torch.randn(4, 16),)
