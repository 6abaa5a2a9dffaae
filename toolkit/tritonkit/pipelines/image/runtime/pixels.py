"""Encoded image bytes -> a classifier's input: decode (Pillow), RGB, shorter side scaled to fit, centre crop,
(x / 255 - mean) / std, channels first.

Training (`shapes/model.py`) and serving (`preprocess`) call the same `to_pixels`, so the served model sees the
pixels it was trained on. Bad input is a ValueError naming the problem (the adapter makes it the request's error).
"""
from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image, ImageOps

#: ImageNet's channel statistics: what most pretrained classifiers expect, and what the shapes model trains with.
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
#: Largest image accepted (width x height), checked before the pixels are decoded.
MAX_PIXELS = 16_000_000
#: What transparent pixels become.
BACKGROUND = (255, 255, 255)


def decode(data: bytes, max_pixels: int = MAX_PIXELS) -> Image.Image:
    """The image in `data` as RGB, upright (EXIF orientation applied), transparency over white."""
    if not data:
        raise ValueError("the image is empty (0 bytes)")
    try:
        opened = Image.open(io.BytesIO(data))   # reads the header only
        if opened.width * opened.height > max_pixels:
            raise ValueError(f"the image is {opened.width}x{opened.height}, over {max_pixels} pixels; "
                             "send a smaller one")
        image = ImageOps.exif_transpose(opened)
        if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
            backdrop = Image.new("RGBA", image.size, BACKGROUND)
            return Image.alpha_composite(backdrop, image.convert("RGBA")).convert("RGB")
        return image.convert("RGB")
    except (OSError, Image.DecompressionBombError) as exc:   # UnidentifiedImageError and truncated files are OSErrors
        raise ValueError(f"not an image Pillow can read ({exc})") from None


def to_pixels(image: Image.Image, height: int, width: int, mean: Sequence[float] = IMAGENET_MEAN,
              std: Sequence[float] = IMAGENET_STD) -> np.ndarray:
    """[3, height, width] float32: scaled (antialiased) to cover height x width, the centre cut out, normalized."""
    scale = max(height / image.height, width / image.width)
    size = (max(width, round(image.width * scale)), max(height, round(image.height * scale)))
    left, top = (size[0] - width) // 2, (size[1] - height) // 2
    image = image.resize(size, Image.Resampling.BILINEAR).crop((left, top, left + width, top + height))
    x = (np.asarray(image, dtype=np.float32) / 255.0 - np.asarray(mean, np.float32)) / np.asarray(std, np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def _numbers(params: dict[str, Any], name: str, default: Sequence[float]) -> tuple[float, ...]:
    words = params.get(name, {}).get("string_value", "").replace(",", " ").split()
    if not words:
        return tuple(default)
    text = " ".join(words)
    try:
        values = tuple(float(v) for v in words)
    except ValueError:
        example = " ".join(map(str, default))
        raise ValueError(f"parameter '{name}' is {text!r}; give three numbers, e.g. {example}") from None
    if len(values) != 3 or (name == "std" and min(values) <= 0):
        above = " above 0" if name == "std" else ""
        raise ValueError(f"parameter '{name}' needs three numbers{above} (R G B), got {text}")
    return values


@dataclass(frozen=True)
class Preprocess:
    """The `preprocess` model's settings: size from its PIXELS output dims [3, H, W], the rest from its parameters."""

    height: int
    width: int
    mean: tuple[float, ...] = IMAGENET_MEAN
    std: tuple[float, ...] = IMAGENET_STD
    max_pixels: int = MAX_PIXELS

    @classmethod
    def from_model_config(cls, config: dict[str, Any]) -> Preprocess:
        """From Triton's model config (JSON form, as `initialize` gets it); a bad setting is a ValueError (no load)."""
        dims = [int(d) for o in config.get("output", []) if o["name"] == "PIXELS" for d in o["dims"]]
        if len(dims) != 3 or dims[0] != 3 or min(dims) < 1:
            raise ValueError(f"output PIXELS needs dims [3, height, width] (RGB, channels first), got {dims}")
        params = config.get("parameters", {})
        max_pixels = params.get("max_pixels", {}).get("string_value", "").strip()
        if max_pixels and (not max_pixels.isdigit() or int(max_pixels) < 1):
            raise ValueError(f"parameter 'max_pixels' is {max_pixels!r}; give a whole number of pixels, "
                             f"e.g. {MAX_PIXELS}")
        return cls(dims[1], dims[2], _numbers(params, "mean", IMAGENET_MEAN), _numbers(params, "std", IMAGENET_STD),
                   int(max_pixels or MAX_PIXELS))

    def __call__(self, images: np.ndarray) -> np.ndarray:
        """A request's IMAGE tensor [batch, 1] of encoded images -> PIXELS [batch, 3, H, W]."""
        pixels = []
        for row, value in enumerate(images.reshape(len(images), -1)[:, 0]):
            try:
                image = decode(bytes(value), self.max_pixels)
            except ValueError as exc:
                raise ValueError(f"IMAGE[{row}]: {exc}") from None
            pixels.append(to_pixels(image, self.height, self.width, self.mean, self.std))
        return np.stack(pixels)
