"""A conv + LSTM CTC acoustic model over 80-dim log-mel frames with a dynamic time axis.

features [B, T, 80] float32 -> log_probs [B, ceil(T / 2), 29] (blank + 26 letters + space + apostrophe).
The LSTM over a dynamic time axis is why its spec picks the TorchScript exporter.
"""
from __future__ import annotations

import torch
from torch import nn

VOCAB = 29


class CTCAcoustic(nn.Module):
    """Strided conv front end (halves T), bidirectional LSTM, per-frame log-softmax."""

    def __init__(self, mels: int = 80, channels: int = 64, hidden: int = 48) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(mels, channels, 3, stride=2, padding=1), nn.ReLU())
        self.lstm = nn.LSTM(channels, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, VOCAB)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        x = self.conv(features.transpose(1, 2)).transpose(1, 2)
        x, _ = self.lstm(x)
        return torch.log_softmax(self.head(x), dim=-1)


def build(frames: int = 50, batch: int = 2, seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The entry point `examples.models.ctc_acoustic:build`."""
    torch.manual_seed(seed)
    return CTCAcoustic().eval(), (torch.randn(batch, frames, 80),)
