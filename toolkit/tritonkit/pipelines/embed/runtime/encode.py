"""Requests of token ids -> embeddings in one encoder run: every row of every request padded to the longest
(attention mask 0 on the padding), so Triton's dynamic batcher pays off whatever the lengths."""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

#: One encoder run: {input_ids, attention_mask} [rows, longest] -> {embedding: [rows, dim]}.
Run = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


def encode(run: Run, requests: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[np.ndarray]:
    """(ids [rows, width], lengths [rows, 1]) per request -> its embeddings [rows, dim], in request order."""
    lengths = [np.asarray(n).reshape(-1) for _, n in requests]
    longest = max(int(n.max(initial=0)) for n in lengths)
    rows = sum(len(n) for n in lengths)
    ids = np.zeros((rows, longest), dtype=np.int64)
    mask = np.zeros((rows, longest), dtype=np.int64)
    at = 0
    for (batch, _), counts in zip(requests, lengths):
        for row, count in zip(np.asarray(batch).reshape(len(counts), -1), counts):
            ids[at, :count] = row[:count]
            mask[at, :count] = 1
            at += 1
    embeddings = run({"input_ids": ids, "attention_mask": mask})["embedding"]
    return np.split(embeddings, np.cumsum([len(n) for n in lengths])[:-1])
