"""Tiny three-stage TTS models with seeded random weights: a FastPitch-like acoustic model and a HiFi-GAN-like vocoder.

They make no sound worth hearing; they have the shapes and the data-dependent lengths of the real ones, so the
three-stage template (frontend -> acoustic -> vocoder) is exported, verified and served in seconds.
- acoustic: `tokens` int64 [T] + `pace` float32 [1] -> `mel` float32 [sum(durations), N_MELS] and `durations`
  int64 [T]. Each token's duration is predicted from the encoded text, divided by the pace (clamped to 0.25..4),
  rounded and clamped to 1..MAX_FRAMES, and the length regulator repeats the token's encoding that many frames: the
  output length depends on the token values, not only on their count.
- vocoder: `mel` float32 [F, N_MELS] -> `audio` float32 [F * HOP] and `sample_rate` int32 [1] (the vocoder says
  its own rate; the three-stage `speech` model passes it on).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

N_MELS, HOP, SAMPLE_RATE, MAX_FRAMES = 20, 256, 22050, 12
VOCAB = Path(__file__).with_name("vocab.json")


def vocab_size(path: Path = VOCAB) -> int:
    """Embedding rows: the highest id of the symbol table plus one (id 0 is padding)."""
    return max(json.loads(path.read_text(encoding="utf-8"))["vocab"].values()) + 1


class TinyAcoustic(nn.Module):
    """Token embedding -> conv encoder -> duration predictor -> length regulator -> conv decoder -> mel frames."""

    def __init__(self, symbols: int, channels: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(symbols, channels)
        self.encoder = nn.Sequential(nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU(),
                                     nn.Conv1d(channels, channels, 3, padding=1), nn.ReLU())
        self.duration = nn.Linear(channels, 1)
        self.decoder = nn.Conv1d(channels, N_MELS, 5, padding=2)
        with torch.no_grad():  # log-durations around log(3) frames with a spread of a few frames per token
            self.duration.weight.mul_(8.0)
            self.duration.bias.fill_(1.1)

    def forward(self, tokens: torch.Tensor, pace: torch.Tensor) -> dict[str, torch.Tensor]:
        hidden = self.encoder(self.embed(tokens).T.unsqueeze(0)).squeeze(0).T          # [T, C]
        frames = torch.exp(self.duration(hidden).squeeze(-1)) / torch.clamp(pace, 0.25, 4.0)   # [T]
        durations = torch.clamp(torch.round(frames), 1, MAX_FRAMES).to(torch.int64)
        expanded = torch.repeat_interleave(hidden, durations, dim=0)                     # [sum(durations), C]
        mel = self.decoder(expanded.T.unsqueeze(0)).squeeze(0).T                        # [sum(durations), N_MELS]
        return {"mel": mel, "durations": durations}


class TinyVocoder(nn.Module):
    """Mel frames -> PCM: a conv in, transposed convs upsampling 8 x 8 x 4 (= HOP samples per frame), tanh out."""

    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv1d(N_MELS, channels, 7, padding=3)]
        for stride in (8, 8, 4):
            layers += [nn.LeakyReLU(0.1), nn.ConvTranspose1d(channels, channels // 2, 2 * stride, stride, stride // 2)]
            channels //= 2
        layers += [nn.LeakyReLU(0.1), nn.Conv1d(channels, 1, 7, padding=3), nn.Tanh()]
        self.net = nn.Sequential(*layers)
        self.register_buffer("rate", torch.tensor([SAMPLE_RATE], dtype=torch.int32))

    def forward(self, mel: torch.Tensor) -> dict[str, torch.Tensor]:
        audio = self.net(mel.T.unsqueeze(0)).reshape(-1)                                # [F * HOP]
        return {"audio": audio, "sample_rate": self.rate.clone()}


def build_acoustic(seed: int = 0) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """Entry point `models:build_acoustic`: the model and an example (12 token ids, pace 1.0)."""
    torch.manual_seed(seed)
    symbols = vocab_size()
    return TinyAcoustic(symbols).eval(), {"tokens": torch.randint(1, symbols, (12,)), "pace": torch.ones(1)}


def build_vocoder(seed: int = 1) -> tuple[nn.Module, dict[str, torch.Tensor]]:
    """Entry point `models:build_vocoder`: the model and an example (40 frames of mel-like values)."""
    torch.manual_seed(seed)
    return TinyVocoder().eval(), {"mel": torch.randn(40, N_MELS)}
