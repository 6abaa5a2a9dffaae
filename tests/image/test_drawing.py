"""The image starter's pictures: drawn shapes, and the samples init writes for the smoke cases."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require

require("PIL", "pip install pillow")
from tritonkit.pipelines.image.runtime.pixels import decode, to_pixels  # noqa: E402
from tritonkit.pipelines.image.shapes.drawing import SIZE, draw, parse_label  # noqa: E402
from tritonkit.pipelines.image.shapes.samples import SAMPLES, SOLID, write_samples  # noqa: E402


def test_init_writes_each_picture_and_its_bytes_as_one_element_npy(tmp_path: Path) -> None:
    written = write_samples(tmp_path)
    pictures = [*SAMPLES, SOLID[0]]
    npy = [Path(name).with_suffix(".npy").name for name in pictures]
    assert sorted(p.name for p in written) == sorted([*pictures, *npy, "orange_pixels.npy"])
    for name in pictures:
        stored = np.load(tmp_path / "samples" / Path(name).with_suffix(".npy"), allow_pickle=False)
        assert stored.shape == (1,) and stored[0] == (tmp_path / "samples" / name).read_bytes()   # the whole file


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
