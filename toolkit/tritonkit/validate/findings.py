"""A semantic problem found in one model's config, before it is given a file name."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Finding:
    """What is wrong with `model` at `field` (a ModelConfig field path) and how to fix it."""

    model: str
    field: str
    problem: str
    fix: str
