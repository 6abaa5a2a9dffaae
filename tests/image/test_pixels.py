"""`image_runtime.pixels`: encoded bytes -> the classifier's PIXELS, and the preprocess settings from its config."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tests.conftest import require

Image = require("PIL.Image", "pip install pillow")
from tritonkit.pipelines.image.runtime.pixels import (  # noqa: E402
    IMAGENET_MEAN,
    IMAGENET_STD,
    Preprocess,
    decode,
    to_pixels,
)


def encoded(image, fmt: str = "PNG", **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def config(dims=(3, 4, 6), **parameters) -> dict:
    """A model config in the JSON form Triton hands `initialize` (dims as strings, parameters as string_value)."""
    return {"output": [{"name": "PIXELS", "dims": [str(d) for d in dims]}],
            "parameters": {k: {"string_value": str(v)} for k, v in parameters.items()}}


def test_a_solid_colour_becomes_its_normalized_value_in_every_pixel() -> None:
    pixels = to_pixels(decode(encoded(Image.new("RGB", (10, 7), (255, 0, 51)))), 4, 6)
    assert pixels.shape == (3, 4, 6) and pixels.dtype == np.float32
    want = (np.array([1.0, 0.0, 0.2]) - IMAGENET_MEAN) / IMAGENET_STD
    np.testing.assert_allclose(pixels[:, 2, 3], want, atol=1e-5)
    assert np.ptp(pixels, axis=(1, 2)).max() < 1e-5


def test_the_centre_is_kept_and_channels_come_first() -> None:
    """A 30x10 picture, left third red, middle green, right blue, into 4x4: only the green middle is left."""
    image = Image.new("RGB", (30, 10), (255, 0, 0))
    image.paste((0, 255, 0), (10, 0, 20, 10))
    image.paste((0, 0, 255), (20, 0, 30, 10))
    pixels = to_pixels(image, 4, 4, mean=(0, 0, 0), std=(1, 1, 1))
    np.testing.assert_allclose(pixels[:, 1:3, 1:3].mean(axis=(1, 2)), [0, 1, 0], atol=0.02)
    assert pixels[1].min() > 0.5   # the crop's edge columns are green too, not red or blue


def test_jpeg_grey_palette_and_transparent_images_decode_to_rgb() -> None:
    grey = decode(encoded(Image.new("L", (5, 5), 128), "JPEG"))
    palette = decode(encoded(Image.new("RGB", (5, 5), (0, 0, 255)).convert("P")))
    clear = decode(encoded(Image.new("RGBA", (5, 5), (255, 0, 0, 0))))
    assert grey.mode == palette.mode == clear.mode == "RGB"
    assert grey.getpixel((2, 2)) == (128, 128, 128) and palette.getpixel((2, 2)) == (0, 0, 255)
    assert clear.getpixel((2, 2)) == (255, 255, 255)   # fully transparent: the white background, not the hidden red


@pytest.mark.parametrize(("data", "problem"), [
    (b"", "the image is empty (0 bytes)"),
    (b"not an image", "not an image Pillow can read (cannot identify image file"),
])
def test_bytes_that_are_no_image_name_the_problem(data: bytes, problem: str) -> None:
    with pytest.raises(ValueError) as error:
        decode(data)
    assert str(error.value).startswith(problem)


def test_a_truncated_file_and_an_image_over_max_pixels_are_refused() -> None:
    png = encoded(Image.new("RGB", (40, 30), (1, 2, 3)))
    with pytest.raises(ValueError, match="not an image Pillow can read"):
        decode(png[: len(png) // 2])
    with pytest.raises(ValueError, match="the image is 40x30, over 1000 pixels; send a smaller one"):
        decode(png, max_pixels=1000)


def test_preprocess_reads_its_size_and_parameters_from_the_config() -> None:
    pre = Preprocess.from_model_config(config((3, 8, 16), mean="0.5, 0.5, 0.5", std="0.25 0.5 1", max_pixels=500))
    assert (pre.height, pre.width, pre.mean, pre.std, pre.max_pixels) == (8, 16, (0.5,) * 3, (0.25, 0.5, 1.0), 500)
    assert Preprocess.from_model_config(config()).mean == IMAGENET_MEAN   # the defaults


def test_preprocess_runs_a_batch_and_names_the_bad_row() -> None:
    preprocess = Preprocess.from_model_config(config())
    good = encoded(Image.new("RGB", (6, 4), (0, 0, 0)))
    batch = preprocess(np.array([[good], [good]], dtype=object))
    assert batch.shape == (2, 3, 4, 6)
    with pytest.raises(ValueError, match=r"^IMAGE\[1\]: not an image Pillow can read"):
        preprocess(np.array([[good], [b"junk"]], dtype=object))


@pytest.mark.parametrize(("cfg", "problem"), [
    (config((4, 8, 8)), "output PIXELS needs dims [3, height, width] (RGB, channels first), got [4, 8, 8]"),
    (config((3, 8)), "output PIXELS needs dims [3, height, width] (RGB, channels first), got [3, 8]"),
    (config(mean="0.5 0.5"), "parameter 'mean' needs three numbers (R G B), got 0.5 0.5"),
    (config(std="1 0 1"), "parameter 'std' needs three numbers above 0 (R G B), got 1 0 1"),
    (config(mean="red"), "parameter 'mean' is 'red'; give three numbers, e.g. 0.485 0.456 0.406"),
    (config(max_pixels="-5"), "parameter 'max_pixels' is '-5'; give a whole number of pixels, e.g. 16000000"),
])
def test_a_bad_setting_stops_the_model_loading_with_one_line(cfg: dict, problem: str) -> None:
    with pytest.raises(ValueError) as error:
        Preprocess.from_model_config(cfg)
    assert str(error.value) == problem
