"""The image starter's classifier: a small CNN trained at build time on shapes drawn for the classes of a labels file.

`build` is the spec's `source.python` entry point: it runs in the export child, trains in seconds (seeded), and
returns the model with a batch of drawn pictures as the example, so nothing is downloaded and the starter's smoke
pictures have answers that mean something. The pictures go through `image_runtime.pixels.to_pixels`, exactly what
the served `preprocess` model does to an uploaded image.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from tritonkit.pipelines.image.runtime.labels import read_labels
from tritonkit.pipelines.image.runtime.pixels import to_pixels
from tritonkit.pipelines.image.shapes.drawing import SIZE, draw, parse_label

#: Canvas sizes pictures are drawn at, so the model sees the resize it gets at run time from images of any size.
CANVASES = (40, 64, 96)
BATCH = 32


class ShapesCNN(nn.Module):
    """PIXELS [B, 3, H, W] -> LOGITS [B, classes]: three conv blocks, global max pooling (a corner or an edge counts
    wherever it is), a linear head."""

    def __init__(self, classes: int) -> None:
        super().__init__()

        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU()]

        self.features = nn.Sequential(*block(3, 8), nn.MaxPool2d(2), *block(8, 16), nn.MaxPool2d(2), *block(16, 32),
                                      nn.AdaptiveMaxPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, classes)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(pixels))


def pictures(labels: list[str], per_class: int, seed: int, size: int = SIZE) -> tuple[torch.Tensor, torch.Tensor]:
    """`per_class` drawn pictures of every class as the classifier's input [N, 3, size, size], and their classes [N]."""
    for label in labels:
        parse_label(label)
    rng = np.random.default_rng(seed)
    x, y = [], []
    for _ in range(per_class):
        for index, label in enumerate(labels):
            canvas = int(rng.choice(CANVASES))
            x.append(to_pixels(draw(label, rng, canvas, canvas), size, size))
            y.append(index)
    return torch.from_numpy(np.stack(x)), torch.tensor(y)


def train(labels: list[str], seed: int = 0, per_class: int = 96, epochs: int = 8, size: int = SIZE) -> ShapesCNN:
    """A ShapesCNN fitted to freshly drawn pictures (Adam, one-cycle learning rate, batches of 32), in eval mode.

    On one thread: batches this small gain nothing from more, and on a busy machine lose much (on the shared
    2-core machine, load 4: 79 s with torch's 2 threads, 6 s with one).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _fit(labels, seed, per_class, epochs, size)
    finally:
        torch.set_num_threads(threads)


def _fit(labels: list[str], seed: int, per_class: int, epochs: int, size: int) -> ShapesCNN:
    torch.manual_seed(seed)
    x, y = pictures(labels, per_class, seed, size)
    model = ShapesCNN(len(labels))
    optimizer = torch.optim.Adam(model.parameters())
    batches = range(0, len(y), BATCH)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, total_steps=epochs * len(batches))
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(y))
        for start in batches:
            batch = order[start:start + BATCH]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x[batch]), y[batch]).backward()
            optimizer.step()
            schedule.step()
    return model.eval()


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    """The share of pictures whose best class is the right one."""
    with torch.no_grad():
        return float((model(x).argmax(dim=-1) == y).float().mean())


def build(labels: str = "labels.txt", seed: int = 0) -> tuple[nn.Module, tuple[torch.Tensor]]:
    """Entry point `tritonkit.pipelines.image.shapes.model:build`: the model trained on the classes of `labels`
    (a path relative to the project), and 4 drawn pictures the training never saw as the export example."""
    names = read_labels(Path(labels))
    model = train(names, seed)
    example, _ = pictures(names, 1, seed + 1)
    return model, (example[:4],)
