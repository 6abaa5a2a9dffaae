"""Pictures of the shapes classifier's classes: a coloured circle, square or triangle on a plain grey background.

A class is a `<colour> <shape>` line of the labels file (e.g. `red circle`). Size, position, tilt (shapes stand
upright, within 15 degrees), shade and background vary from picture to picture, so a model trained on them learns the
shape and the colour, not one image.
"""
from __future__ import annotations

import math

import numpy as np
from PIL import Image, ImageDraw

COLOURS = {"red": (215, 40, 40), "green": (40, 165, 60), "blue": (40, 80, 215),
           "yellow": (225, 200, 30), "purple": (140, 50, 170), "orange": (235, 130, 20)}
SHAPES = ("circle", "square", "triangle")
#: Side of the classifier's input (PIXELS dims [3, SIZE, SIZE] in the starter's spec).
SIZE = 32
#: Colour channels move by up to this much from the colour's own, per picture.
SHADE = 25
#: Largest tilt, in radians, either way (a triangle's apex points up, a square's sides are level).
TILT = 0.25
#: Angle of the first corner when upright: a triangle's apex, a square's top right corner.
UPRIGHT = {"triangle": -math.pi / 2, "square": -math.pi / 4}


def parse_label(label: str) -> tuple[str, str]:
    """(colour, shape) of a class name; a ValueError names what can be drawn."""
    words = label.split()
    if len(words) != 2 or words[0] not in COLOURS or words[1] not in SHAPES:
        raise ValueError(f"class '{label}' cannot be drawn: name it '<colour> <shape>', "
                         f"colour one of {', '.join(COLOURS)}, shape one of {', '.join(SHAPES)}")
    return words[0], words[1]


def _corners(shape: str, cx: float, cy: float, r: float, angle: float) -> list[tuple[float, float]]:
    sides = 4 if shape == "square" else 3
    turns = [angle + 2 * math.pi * i / sides for i in range(sides)]
    return [(cx + r * math.cos(t), cy + r * math.sin(t)) for t in turns]


def draw(label: str, rng: np.random.Generator, width: int = 64, height: int = 64) -> Image.Image:
    """One RGB picture of `label`, the shape inside the central square of the canvas (what a centre crop keeps)."""
    colour, shape = parse_label(label)
    side = min(width, height)
    grey = int(rng.choice([rng.integers(15, 80), rng.integers(175, 250)]))
    image = Image.new("RGB", (width, height), (grey, grey, grey))
    fill = tuple(int(np.clip(c + rng.integers(-SHADE, SHADE + 1), 0, 255)) for c in COLOURS[colour])
    r = side * rng.uniform(0.22, 0.4)
    cx = width / 2 + rng.uniform(-1, 1) * (side / 2 - r) * 0.8
    cy = height / 2 + rng.uniform(-1, 1) * (side / 2 - r) * 0.8
    pen = ImageDraw.Draw(image)
    if shape == "circle":
        pen.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
    else:
        pen.polygon(_corners(shape, cx, cy, r, UPRIGHT[shape] + rng.uniform(-TILT, TILT)), fill=fill)
    return image
