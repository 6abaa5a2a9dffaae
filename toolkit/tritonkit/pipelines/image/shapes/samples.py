"""The image starter's sample pictures, drawn by `tritonkit init` with seeds the training never uses.

Each is written twice under `samples/`: as the image file (to look at, or send with any client) and as the `.npy`
that the spec's smoke cases read, holding the file's bytes as one BYTES element (smoke tensor files are .npy or
.wav). One more picture is a single colour, for `preprocess`'s own known answer: that colour, normalized, in every
pixel. Run `python -m tritonkit.pipelines.image.shapes.samples DIR` to write them into a project later.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image

from tritonkit.pipelines.image.runtime.pixels import IMAGENET_MEAN, IMAGENET_STD
from tritonkit.pipelines.image.shapes.drawing import SIZE, draw

#: File name -> (class, canvas width, height, seed): a PNG, a JPEG cut to its centre, a PNG larger than trained on.
SAMPLES = {
    "red_circle.png": ("red circle", 96, 96, 101),
    "green_triangle.jpg": ("green triangle", 160, 120, 102),
    "blue_square.png": ("blue square", 256, 256, 103),
}
#: The single-colour picture (file name, RGB, width, height); its PIXELS go to `<stem>_pixels.npy`.
SOLID = ("orange.png", (255, 128, 0), 40, 30)


def solid_pixels(rgb: tuple[int, int, int], size: int = SIZE) -> np.ndarray:
    """What `preprocess` makes of a picture of one colour, from the definition: (rgb / 255 - mean) / std everywhere."""
    value = (np.array(rgb, np.float32) / 255 - np.array(IMAGENET_MEAN, np.float32)) / np.array(IMAGENET_STD, np.float32)
    return np.broadcast_to(value[:, None, None], (3, size, size)).astype(np.float32)


def _as_bytes_tensor(image_path: Path) -> Path:
    npy_path = image_path.with_suffix(".npy")
    np.save(npy_path, np.array([image_path.read_bytes()]))
    return npy_path


def write_samples(root: Path) -> list[Path]:
    """Draws every sample into `root/samples/`; returns the files written."""
    folder = root / "samples"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (label, width, height, seed) in SAMPLES.items():
        draw(label, np.random.default_rng(seed), width, height).save(folder / name, quality=90)
        written += [folder / name, _as_bytes_tensor(folder / name)]
    name, rgb, width, height = SOLID
    Image.new("RGB", (width, height), rgb).save(folder / name)
    expected = folder / f"{Path(name).stem}_pixels.npy"
    np.save(expected, solid_pixels(rgb))
    return [*written, folder / name, _as_bytes_tensor(folder / name), expected]


if __name__ == "__main__":
    for path in write_samples(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(path)
