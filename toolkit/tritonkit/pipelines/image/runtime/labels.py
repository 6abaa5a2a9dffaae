"""A classifier's LOGITS -> its k best classes: labels from a labels file (line i names class i) and softmax
probabilities, best first."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LABELS_FILE = "labels.txt"


def read_labels(path: Path) -> list[str]:
    """The class names of a labels file, one per line; a blank line (it would shift every class after it) is refused."""
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    blank = next((n for n, line in enumerate(lines, 1) if not line.strip()), None)
    if blank is not None:
        raise ValueError(f"{path}: line {blank} is blank; each line names one class, in the model's output order")
    return [line.strip() for line in lines]


def top_k(logits: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Class indices [batch, k], best first (ties: lower index first), and their softmax probabilities [batch, k]."""
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs = z / z.sum(axis=-1, keepdims=True)
    best = np.argsort(-probs, axis=-1, kind="stable")[:, :k]
    return best, np.take_along_axis(probs, best, axis=-1).astype(np.float32)


def _dims(tensors: list[dict[str, Any]], name: str) -> list[int]:
    return [int(d) for t in tensors if t["name"] == name for d in t["dims"]]


@dataclass(frozen=True)
class Postprocess:
    """The `postprocess` model: its labels file, and k from its LABELS output dims [k]."""

    labels: list[str]
    k: int

    @classmethod
    def from_model_config(cls, config: dict[str, Any], folder: Path) -> Postprocess:
        """From Triton's model config (JSON form) and the version folder holding labels.txt; a mismatch is a
        ValueError (the model does not load)."""
        path = folder / LABELS_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{folder} has no {LABELS_FILE}: give it in the spec "
                                    f"(files: {{{LABELS_FILE}: {LABELS_FILE}}})")
        labels = read_labels(path)
        outputs = config.get("output", [])
        classes, k = _dims(config.get("input", []), "LOGITS"), _dims(outputs, "LABELS")
        if classes != [len(labels)]:
            raise ValueError(f"input LOGITS has dims {classes} but {LABELS_FILE} names {len(labels)} classes; "
                             f"make them agree (dims: [{len(labels)}])")
        if len(k) != 1 or not 1 <= k[0] <= len(labels):
            raise ValueError(f"output LABELS needs dims [k] with 1 <= k <= {len(labels)} classes, got {k}")
        if _dims(outputs, "SCORES") != k:
            raise ValueError(f"output SCORES needs the dims of LABELS ({k}), got {_dims(outputs, 'SCORES')}")
        return cls(labels, k[0])

    def __call__(self, logits: np.ndarray) -> dict[str, np.ndarray]:
        """LOGITS [batch, classes] -> LABEL [batch, 1] (the best), LABELS [batch, k], SCORES [batch, k]."""
        best, scores = top_k(logits, self.k)
        labels = np.array([[self.labels[i] for i in row] for row in best], dtype=object)
        return {"LABEL": labels[:, :1], "LABELS": labels, "SCORES": scores}
