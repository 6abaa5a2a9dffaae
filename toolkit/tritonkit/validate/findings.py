"""A semantic problem found in one model's config, before it is given a file name."""
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Finding:
    """What is wrong with `model` at `field` (a ModelConfig field path) and how to fix it.

    `severity` "warning" marks a rule where tritonkit is deliberately stricter than Triton 2.51: it is
    reported but does not fail validate or build (the problem text names what Triton itself does).
    """

    model: str
    field: str
    problem: str
    fix: str
    severity: Literal["error", "warning"] = "error"
