"""Requests of token ids -> embeddings: every row of a dynamic batch sorted by length and run in as few encoder
calls as padding makes worth it, so Triton's batcher pays off whatever the lengths (one long sentence does not pad
seven short ones to its length)."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: One encoder run: {input_ids, attention_mask} [rows, longest] -> {embedding: [rows, dim]}.
Run = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
#: What one more encoder call costs, in padded tokens (per-call work besides the tokens themselves).
CALL_COST_TOKENS = 64


def chunks(lengths: Sequence[int], call_cost: int = CALL_COST_TOKENS) -> list[tuple[int, int]]:
    """[start, end) runs over LENGTHS (sorted ascending) minimizing the tokens computed, padding included, plus
    CALL_COST per run: each run pads to its last (longest) row."""
    best = [0] + [0] * len(lengths)   # best[j]: least cost of the first j rows
    cut = [0] * (len(lengths) + 1)
    for end in range(1, len(lengths) + 1):
        best[end], cut[end] = min((best[start] + (end - start) * lengths[end - 1] + call_cost, start)
                                  for start in range(end))
    runs, end = [], len(lengths)
    while end:
        runs.append((cut[end], end))
        end = cut[end]
    return runs[::-1]


def _rows(requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """Every request's rows without their padding, in order."""
    rows = []
    for batch, counts in requests:
        lengths = np.asarray(counts).reshape(-1)
        rows += [row[:n] for row, n in zip(np.asarray(batch).reshape(len(lengths), -1), lengths.tolist())]
    return rows


def encode(run: Run, requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """(ids [rows, width], lengths [rows, 1]) per request -> its embeddings [rows, dim], in request order."""
    rows = _rows(requests)
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    vectors: list[np.ndarray] = [np.empty(0)] * len(rows)
    for start, end in chunks([len(rows[i]) for i in order]):
        part = order[start:end]
        ids = np.zeros((len(part), len(rows[part[-1]])), dtype=np.int64)
        mask = np.zeros_like(ids)
        for at, i in enumerate(part):
            ids[at, :len(rows[i])], mask[at, :len(rows[i])] = rows[i], 1
        for i, vector in zip(part, run({"input_ids": ids, "attention_mask": mask})["embedding"]):
            vectors[i] = vector
    return np.split(np.array(vectors), np.cumsum([len(np.asarray(n).reshape(-1)) for _, n in requests])[:-1])
