"""The image starter's classifier: trained at build time on drawn shapes, it names pictures it never saw."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import require
from tritonkit.package_files import package_path

pytestmark = pytest.mark.slow   # trains the CNN once for the module (~6 s on one thread, plus torch's import)
STARTER_LABELS = package_path("pipelines/image/starter/labels.txt")


@pytest.fixture(scope="module")
def trained() -> tuple[Any, Any]:
    """build() as the export child calls it, from the starter's labels file (torch imported here, not at collection)."""
    require("torch", "pip install 'tritonkit[export]'")
    require("PIL", "pip install pillow")
    from tritonkit.pipelines.image.shapes.model import build

    model, (example,) = build(str(STARTER_LABELS))
    return model, example


def test_it_names_fresh_pictures_of_every_class(trained: tuple[Any, Any]) -> None:
    from tritonkit.pipelines.image.runtime.labels import read_labels
    from tritonkit.pipelines.image.shapes.drawing import SIZE
    from tritonkit.pipelines.image.shapes.model import accuracy, pictures

    model, example = trained
    x, y = pictures(read_labels(STARTER_LABELS), 12, seed=7)   # a seed neither training (0) nor the example (1) used
    assert accuracy(model, x, y) >= 0.95
    assert example.shape == (4, 3, SIZE, SIZE)


def test_every_starter_sample_is_its_class_from_its_file(trained: tuple[Any, Any], tmp_path: Path) -> None:
    """What the starter's smoke cases claim, from the files init writes (PNGs, a JPEG cut to its centre)."""
    import torch

    from tritonkit.pipelines.image.runtime.labels import read_labels
    from tritonkit.pipelines.image.runtime.pixels import decode, to_pixels
    from tritonkit.pipelines.image.shapes.drawing import SIZE
    from tritonkit.pipelines.image.shapes.samples import SAMPLES, write_samples

    model, _ = trained
    labels = read_labels(STARTER_LABELS)
    write_samples(tmp_path)
    for name, (label, *_rest) in SAMPLES.items():
        data = np.load(tmp_path / "samples" / Path(name).with_suffix(".npy"), allow_pickle=False)[0]
        with torch.no_grad():
            probs = torch.softmax(model(torch.from_numpy(to_pixels(decode(data), SIZE, SIZE)[None])), dim=-1)[0]
        assert labels[int(probs.argmax())] == label and float(probs.max()) > 0.8, (name, probs)
