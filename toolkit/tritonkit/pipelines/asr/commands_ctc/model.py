"""The shipped CTC acoustic model: 80-dim fbank frames -> per-frame log-probabilities over letter tokens.

features [B, T, 80] float32 -> log_probs [B, ceil(T / 2), len(TOKENS)]. Tokens are the CTC blank, the word end
`|` and the letters of the vocabulary; a word is spelled as its letters followed by `|` (as in lang/lexicon.txt).
Convolutions only, with a finite receptive field (RECEPTIVE_FRAMES input frames each side of an output frame),
so a streaming model that runs a chunk with that much context on both sides gets exactly the offline outputs.
Feature normalisation (global mean/std of the training data) is inside the model: no per-utterance statistics.
"""
from pathlib import Path

import numpy as np
import torch
from torch import nn

from tritonkit.pipelines.asr.commands_ctc.vocabulary import WORDS

HERE = Path(__file__).resolve().parent
WEIGHTS = HERE / "weights" / "ctc_commands.pt"
BLANK, WORD_END = "<blk>", "|"
TOKENS = [BLANK, WORD_END, *sorted({c for w in WORDS for c in w})]
MELS, CHANNELS, KERNEL = 80, 192, 7
DILATIONS = (1, 2, 4, 1, 2, 4, 1, 2)
SUBSAMPLING = 2
RECEPTIVE_FRAMES = 1 + SUBSAMPLING * sum((KERNEL // 2) * d for d in DILATIONS)  # input frames each side


class _Block(nn.Module):
    """Residual depthwise-separable conv: depthwise (dilated, along time) -> pointwise -> batch norm -> ReLU."""

    def __init__(self, dilation: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv1d(CHANNELS, CHANNELS, KERNEL, padding=KERNEL // 2 * dilation, dilation=dilation,
                                   groups=CHANNELS)
        self.pointwise = nn.Conv1d(CHANNELS, CHANNELS, 1)
        self.norm = nn.BatchNorm1d(CHANNELS)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(torch.relu(self.norm(self.pointwise(self.depthwise(x)))))


class CommandCTC(nn.Module):
    """Strided conv front end (halves T), dilated residual blocks, per-frame log-softmax over TOKENS."""

    feat_mean: torch.Tensor  # buffers: the training data's global fbank statistics
    feat_std: torch.Tensor

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("feat_mean", torch.zeros(MELS))
        self.register_buffer("feat_std", torch.ones(MELS))
        self.front = nn.Sequential(nn.Conv1d(MELS, CHANNELS, 3, stride=SUBSAMPLING, padding=1),
                                   nn.BatchNorm1d(CHANNELS), nn.ReLU())
        self.blocks = nn.Sequential(*(_Block(d) for d in DILATIONS))
        self.head = nn.Conv1d(CHANNELS, len(TOKENS), 1)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        x = ((features - self.feat_mean) / self.feat_std).transpose(1, 2)
        x = self.head(self.blocks(self.front(x))).transpose(1, 2)
        return torch.log_softmax(x, dim=-1)


def greedy_decode(log_probs: np.ndarray) -> list[str]:
    """Best token per frame, repeats merged, blanks dropped, split into words at `|`."""
    best = np.asarray(log_probs).argmax(axis=-1)
    text, prev = [], -1
    for t in best:
        if t != prev and t != 0:
            text.append(TOKENS[t])
        prev = t
    return "".join(text).replace(WORD_END, " ").split()


def load(path: Path = WEIGHTS) -> CommandCTC:
    """The committed weights, in eval mode."""
    model = CommandCTC()
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model.eval()


def transcribe(model: CommandCTC, features: np.ndarray) -> list[str]:
    """Greedy CTC transcript of one utterance's fbank features [T, 80]."""
    with torch.no_grad():
        log_probs = model(torch.from_numpy(np.ascontiguousarray(features, dtype=np.float32))[None])[0].numpy()
    return greedy_decode(log_probs)


def build(frames: int = 120, batch: int = 2) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The exporter's entry point `tritonkit.pipelines.asr.commands_ctc.model:build`: the trained model and example
    features."""
    return load(), (torch.randn(batch, frames, MELS, generator=torch.Generator().manual_seed(0)) * 3 - 8,)
