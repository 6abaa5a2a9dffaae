"""A decoder file run in process as the engine runs it, for the build's measures (`quality`, `chat_quality`)."""
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCache


class Graph:
    """One decoder file in onnxruntime, stepped as the engine steps it (`OnnxDecoder.step`): each sequence keeps
    its own cache, and rows of any lengths share a call."""

    def __init__(self, path: Path) -> None:
        from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder

        self.decoder = OnnxDecoder(path)

    def caches(self, positions: list[int]) -> list["KVCache"]:
        """One empty cache of each size, slots of one store as the engine's are (its calls run in place)."""
        from tritonkit.pipelines.llm.runtime.kv_cache import KVCachePool

        pool = KVCachePool(self.decoder.geometry, self.decoder.geometry.bytes_per_token * sum(positions),
                           slot_positions=max(positions), slots_per_store=len(positions))
        return [pool.allocate(i, n) for i, n in enumerate(positions)]

    def step(self, caches: list["KVCache"], rows: list[np.ndarray]) -> np.ndarray:
        """Appends each row's ids to its cache; the logits of each row's newest token [rows, V]."""
        from tritonkit.pipelines.llm.runtime.decoder import Row

        return self.decoder.step([Row(cache, np.asarray(ids, np.int64)) for cache, ids in zip(caches, rows)])

    def fill(self, caches: list["KVCache"], ids: np.ndarray) -> None:
        """Every (empty) cache starts with the keys/values of `ids`, computed once: a prompt start all rows share."""
        self.step(caches[:1], [ids])
        first, n = caches[0], len(ids)
        for cache in caches[1:]:
            cache.key[:, :, :n] = first.key[:, :, :n]
            cache.value[:, :, :n] = first.value[:, :, :n]
            cache.length = n
