"""Per-request KV caches with a byte budget: reserved whole at admission, freed on finish, cancel or idle.

A request reserves `prompt + max_tokens` positions up front (numpy arrays [L, H, capacity, D] for keys and values,
in pages of their own: zero, and touched only as positions fill). Reserving the worst case means an admitted request
can always finish, and a request that cannot fit is refused at once with the numbers that explain why. Blocks kept
for prefix reuse (`prefix_cache.PrefixCache`) count against the same budget and are evicted for a request that
needs their memory.
"""
from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import pages

if TYPE_CHECKING:
    from .prefix_cache import PrefixCache

MIB = 1024 * 1024


class CacheBudgetError(Exception):
    """The request's KV cache does not fit in what the budget has left."""


@dataclass
class CacheGeometry:
    """Shape of one position's keys (and values): layers x kv heads x head size."""

    layers: int
    kv_heads: int
    head_dim: int
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.float32))

    @property
    def bytes_per_token(self) -> int:
        """Keys plus values of one position over all layers."""
        return 2 * self.layers * self.kv_heads * self.head_dim * np.dtype(self.dtype).itemsize


@dataclass
class KVCache:
    """One request's cache: positions [0, length) of `key`/`value` are filled, the rest are zero (the decoder may
    read the whole capacity as masked padding)."""

    key: np.ndarray
    value: np.ndarray
    length: int = 0

    @classmethod
    def empty(cls, geometry: CacheGeometry, positions: int) -> KVCache:
        """A cache of `positions` positions, all zero."""
        shape = (geometry.layers, geometry.kv_heads, positions, geometry.head_dim)
        return cls(pages.zeros(shape, geometry.dtype), pages.zeros(shape, geometry.dtype))

    @property
    def capacity(self) -> int:
        return self.key.shape[2]

    def check_room(self, n: int) -> None:
        """CacheBudgetError unless `n` more positions fit after the filled ones (the decoder writes them)."""
        if self.length + n > self.capacity:
            raise CacheBudgetError(f"cache overflow: {self.length} + {n} positions > capacity {self.capacity}")


class KVCachePool:
    """All live caches of one model instance, and the prefix cache's blocks (`prefix`, optional), within
    `budget_bytes`."""

    def __init__(self, geometry: CacheGeometry, budget_bytes: int, prefix: PrefixCache | None = None) -> None:
        self.geometry = geometry
        self.budget_bytes = int(budget_bytes)
        self.caches: dict[Hashable, KVCache] = {}
        self.reserved_bytes = 0
        self.prefix = prefix

    def bytes_for(self, positions: int) -> int:
        return positions * self.geometry.bytes_per_token

    @property
    def free_bytes(self) -> int:
        return self.budget_bytes - self.reserved_bytes - (self.prefix.bytes if self.prefix is not None else 0)

    def allocate(self, key: Hashable, positions: int, detail: str = "") -> KVCache:
        """A cache for `positions` positions (evicting cached prefix blocks when it needs their memory), or
        CacheBudgetError saying what it needs and what is left."""
        if key in self.caches:
            raise KeyError(f"a cache for request {key!r} already exists")
        need = self.bytes_for(positions)
        available = self.budget_bytes - self.reserved_bytes  # cached prefix blocks make way for requests
        if need > available:
            why = f" ({detail})" if detail else ""
            scope = "the whole budget" if need > self.budget_bytes else f"what is free ({available / MIB:.2f} MiB; " \
                f"{len(self.caches)} running requests hold {self.reserved_bytes / MIB:.2f} MiB)"
            raise CacheBudgetError(
                f"KV cache budget exceeded: this request needs {need / MIB:.2f} MiB for {positions} positions{why}, "
                f"more than {scope} of the {self.budget_bytes / MIB:.2f} MiB budget; lower max_tokens or the prompt, "
                "retry later, or raise the model's kv_cache_bytes parameter")
        if self.prefix is not None and need > self.free_bytes:
            self.prefix.evict(need - self.free_bytes)
        cache = KVCache.empty(self.geometry, positions)
        self.caches[key] = cache
        self.reserved_bytes += need
        return cache

    def free(self, key: Hashable) -> bool:
        """Releases a request's cache; False when it had none."""
        cache = self.caches.pop(key, None)
        if cache is None:
            return False
        self.reserved_bytes -= self.bytes_for(cache.capacity)
        return True

    def __len__(self) -> int:
        return len(self.caches)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.caches
