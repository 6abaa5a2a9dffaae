"""The image starter's classifier: trained at build time on drawn shapes, it names pictures it never saw."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require

require("torch", "pip install 'tritonkit[export]'")
require("PIL", "pip install pillow")
from tritonkit.package_files import package_path  # noqa: E402
from tritonkit.pipelines.image.runtime.labels import read_labels  # noqa: E402
from tritonkit.pipelines.image.runtime.pixels import decode, to_pixels  # noqa: E402
from tritonkit.pipelines.image.shapes.drawing import (  # noqa: E402
    SIZE,  # noqa: E402
    draw,
    parse_label,
)
from tritonkit.pipelines.image.shapes.model import accuracy, build, pictures  # noqa: E402
from tritonkit.pipelines.image.shapes.samples import SAMPLES, SOLID, write_samples  # noqa: E402

STARTER_LABELS = package_path("pipelines/image/starter/labels.txt")


@pytest.fixture(scope="module")
def trained():
    """build() as the export child calls it, from the starter's labels file."""
    import torch

    torch.set_num_threads(1)
    model, (example,) = build(str(STARTER_LABELS))
    return model, example


def test_it_names_fresh_pictures_of_every_class(trained) -> None:
    model, example = trained
    labels = read_labels(STARTER_LABELS)
    x, y = pictures(labels, 12, seed=7)   # a seed neither training (0) nor the example (1) used
    assert accuracy(model, x, y) >= 0.95
    assert example.shape == (4, 3, SIZE, SIZE)


def test_every_starter_sample_is_its_class_from_its_file(trained, tmp_path: Path) -> None:
    """What the starter's smoke cases claim, from the files init writes (PNG, a JPEG cut to its centre)."""
    import torch

    model, _ = trained
    labels = read_labels(STARTER_LABELS)
    written = write_samples(tmp_path)
    pictures = [*SAMPLES, SOLID[0]]
    npy = [Path(name).with_suffix(".npy").name for name in pictures]
    assert sorted(p.name for p in written) == sorted([*pictures, *npy, "orange_pixels.npy"])
    for name, (label, *_rest) in SAMPLES.items():
        data = (tmp_path / "samples" / name).read_bytes()
        stored = np.load(tmp_path / "samples" / Path(name).with_suffix(".npy"), allow_pickle=False)
        assert stored.shape == (1,) and stored[0] == data   # the file's bytes, whole, as one BYTES element
        pixels = torch.from_numpy(to_pixels(decode(data), SIZE, SIZE)[None])
        with torch.no_grad():
            probs = torch.softmax(model(pixels), dim=-1)[0]
        assert labels[int(probs.argmax())] == label and float(probs.max()) > 0.8, (name, probs)


def test_the_single_colour_sample_has_the_pixels_its_smoke_case_expects(tmp_path: Path) -> None:
    """preprocess's known answer, written by init from the definition, is what the runtime makes of the picture."""
    write_samples(tmp_path)
    data = np.load(tmp_path / "samples" / "orange.npy", allow_pickle=False)[0]
    expected = np.load(tmp_path / "samples" / "orange_pixels.npy", allow_pickle=False)
    assert expected.shape == (3, SIZE, SIZE) and expected.dtype == np.float32
    np.testing.assert_allclose(to_pixels(decode(data), SIZE, SIZE), expected, atol=1e-6)
    orange = [(1 - 0.485) / 0.229, (128 / 255 - 0.456) / 0.224, (0 - 0.406) / 0.225]   # (255, 128, 0) by hand
    np.testing.assert_allclose(expected[:, 0, 0], orange, rtol=1e-6)


def test_an_unknown_class_names_what_can_be_drawn() -> None:
    with pytest.raises(ValueError, match="class 'pink star' cannot be drawn: name it '<colour> <shape>', colour one"):
        parse_label("pink star")


def test_a_drawing_is_the_same_for_the_same_seed() -> None:
    one, two = (np.asarray(draw("blue triangle", np.random.default_rng(3), 50, 40)) for _ in range(2))
    assert one.shape == (40, 50, 3) and np.array_equal(one, two)
