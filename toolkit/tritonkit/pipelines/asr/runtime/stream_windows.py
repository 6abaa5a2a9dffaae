"""Which feature frames a streaming chunk must send to the acoustic model, and which of its outputs are final.

A convolutional CTC model with a finite receptive field (`receptive` input frames each side of an output frame,
`subsampling` input frames per output frame) gives exactly its offline outputs for a window that holds that much
real context on both sides, or that starts at the stream's first frame or ends at its last one (the edges the
offline run pads). Output j is treated as needing inputs [s*j - R - 1, s*j + R + 1]: one frame of margin each
side, so any stride-s front end is covered. Windows of many streams share one padded batch: padding is added only
on a side whose outputs are not taken (right of a mid-stream window, left of an end window that has left context).
Plain numpy, unit-tested against the real model outside Triton.
"""
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Receptive:
    """The acoustic model's receptive field (input frames each side) and subsampling (input frames per output)."""

    frames: int
    subsampling: int

    def window_start(self, first_output: int) -> int:
        """The first input frame a window for outputs from `first_output` on must hold (a multiple of s)."""
        s = self.subsampling
        return max(0, (s * first_output - self.frames - 1) // s * s)

    def ready(self, total: int, final: bool) -> int:
        """How many outputs are final once `total` input frames are known (all of them at the stream's end)."""
        if final:
            return -(-total // self.subsampling)
        return max(0, (total - self.frames - 2) // self.subsampling + 1)


@dataclass(frozen=True)
class Window:
    """Input frames [lo, lo + len(features)) for outputs [first, last); `fixed_*` say which edges are real ends."""

    features: np.ndarray
    lo: int
    first: int
    last: int
    fixed_left: bool
    fixed_right: bool

    def rows(self, subsampling: int) -> slice:
        """The window's output rows holding outputs [first, last) (before any left padding)."""
        skip = self.lo // subsampling
        return slice(self.first - skip, self.last - skip)


@dataclass
class FrameBuffer:
    """One stream's feature frames still needed as context, and how many outputs it has emitted."""

    receptive: Receptive
    dim: int = 80
    frames: np.ndarray = field(init=False)
    base: int = 0      # absolute index of frames[0]
    emitted: int = 0   # outputs already sent to the decoder

    def __post_init__(self) -> None:
        self.frames = np.zeros((0, self.dim), np.float32)

    @property
    def total(self) -> int:
        return self.base + len(self.frames)

    def add(self, new: np.ndarray) -> None:
        self.frames = np.concatenate([self.frames, np.asarray(new, np.float32).reshape(-1, self.dim)])

    def window(self, final: bool) -> Window | None:
        """The window for every output that is final now and not yet emitted, or None when there is none."""
        r, s = self.receptive, self.receptive.subsampling
        first, last = self.emitted, r.ready(self.total, final)
        if last <= first:
            return None
        lo = r.window_start(first)
        hi = self.total if final else min(self.total, s * (last - 1) + r.frames + 2)
        return Window(self.frames[lo - self.base:hi - self.base], lo, first, last, lo == 0, final)

    def advance(self, window: Window) -> None:
        """The window's outputs are emitted: forget the frames no later window needs."""
        self.emitted = window.last
        keep = self.receptive.window_start(self.emitted)
        self.frames = self.frames[keep - self.base:]
        self.base = keep


@dataclass(frozen=True)
class Call:
    """One acoustic-model call: a padded batch [B, L, dim] and, per window, its row in it and its left padding."""

    batch: np.ndarray
    members: list[tuple[int, int]]  # (index into the windows, left padding in frames)


def _fits(window: Window, length: int, subsampling: int) -> int | None:
    """The left padding that makes `window` `length` frames long without changing its taken outputs, or None."""
    deficit = length - len(window.features)
    if deficit == 0 or (deficit > 0 and not window.fixed_right):
        return 0
    if deficit > 0 and not window.fixed_left and deficit % subsampling == 0:
        return deficit
    return None


def batch_calls(windows: list[Window], subsampling: int) -> list[Call]:
    """As few padded batches as the windows' fixed edges allow (one when all are mid-stream)."""
    calls = []
    remaining = list(range(len(windows)))
    while remaining:
        lengths = sorted({len(windows[i].features) + k for i in remaining for k in range(subsampling)})
        best: list[tuple[int, int]] = []
        best_length = lengths[0]
        for length in lengths:
            fitting = [(i, pad) for i in remaining if (pad := _fits(windows[i], length, subsampling)) is not None]
            if len(fitting) > len(best):
                best, best_length = fitting, length
        batch = np.zeros((len(best), best_length, windows[best[0][0]].features.shape[1]), np.float32)
        for row, (i, pad) in enumerate(best):
            features = windows[i].features
            batch[row, pad:pad + len(features)] = features
        calls.append(Call(batch, best))
        taken = {i for i, _ in best}
        remaining = [i for i in remaining if i not in taken]
    return calls


def window_outputs(call: Call, log_probs: np.ndarray, windows: list[Window], subsampling: int) -> dict[int, np.ndarray]:
    """Each member window's rows of the call's log-probs [B, L', V]: exactly its outputs [first, last)."""
    out = {}
    for row, (i, pad) in enumerate(call.members):
        rows = windows[i].rows(subsampling)
        shift = pad // subsampling
        out[i] = log_probs[row, rows.start + shift:rows.stop + shift]
    return out
