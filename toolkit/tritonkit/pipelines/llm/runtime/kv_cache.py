"""Per-request KV caches with a byte budget: reserved whole at admission, freed on finish, cancel or idle.

A request reserves `prompt + max_tokens` positions up front; reserving the worst case means an admitted request can
always finish, and a request that cannot fit is refused at once with the numbers that explain why. Blocks kept for
prefix reuse (`prefix_cache.PrefixCache`) count against the same budget and are evicted for a request that needs
their memory.

Where the caches live: side by side, one slot each, in stores of `slots_per_store` slots of the model's whole context
(`SlotStore`: keys and values [L, slots, H, positions, D] in pages of their own, resident only as positions fill), so
that the rows of one decoder call are one contiguous block of the store, which the decoder binds as its past and its
present outputs: the attention reads and writes the caches in place, whichever rows run together. A freed slot's
pages go back to the system at once and the store's last cache moves into it (a copy of its filled positions), so
the live slots stay 0..n-1 and a call over them wastes no rows; an empty store is dropped.
"""
from __future__ import annotations

import heapq
import math
import mmap
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import pages

if TYPE_CHECKING:
    from .prefix_cache import PrefixCache

MIB = 1024 * 1024
#: Caches a store holds side by side (`generate` advances up to max_batch_size, 16, a step).
SLOTS_PER_STORE = 16
#: Positions a store keeps after each slot's reserved ones: a decode step's paired query writes its throwaway keys
#: and values one position past the token (export/kv_graph.py), which at the end of a reservation lands here.
SPARE_POSITIONS = 1


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


@dataclass(eq=False)
class SlotStore:
    """Caches side by side (see the module): `key` and `value` [L, slots, H, positions, D]; `free` the slots not in
    use, lowest first."""

    key: np.ndarray
    value: np.ndarray
    free: list[int]

    @classmethod
    def create(cls, geometry: CacheGeometry, slots: int, positions: int) -> SlotStore:
        """Slots of `positions` positions each and the spare ones after them, rounded up to whole pages a slot (a
        freed slot's pages are given back whole)."""
        position_bytes = geometry.kv_heads * geometry.head_dim * np.dtype(geometry.dtype).itemsize
        step = mmap.PAGESIZE // math.gcd(mmap.PAGESIZE, position_bytes)
        total = -(-(positions + SPARE_POSITIONS) // step) * step
        shape = (geometry.layers, slots, geometry.kv_heads, total, geometry.head_dim)
        return cls(pages.zeros(shape, geometry.dtype), pages.zeros(shape, geometry.dtype), list(range(slots)))

    @property
    def slots(self) -> int:
        return self.key.shape[1]

    @property
    def positions(self) -> int:
        return self.key.shape[3]

    def take(self) -> int | None:
        """The lowest free slot, or None when every slot is in use."""
        return heapq.heappop(self.free) if self.free else None

    def give_back(self, slot: int) -> None:
        """Frees a slot: its pages go back to the system (reading as zero again)."""
        for array in (self.key, self.value):
            layer_stride = array.strides[0]
            for layer in range(array.shape[0]):
                start = layer * layer_stride + slot * array.strides[1]
                pages.discard(array, start, start + array.strides[1])
        heapq.heappush(self.free, slot)


@dataclass(eq=False)
class KVCache:
    """One request's cache: slot `slot` of `store`, positions [0, length) filled of the `capacity` reserved (the
    store's positions after them may hold anything: the decoder reads a row's filled positions only)."""

    store: SlotStore
    slot: int
    capacity: int
    length: int = 0

    @classmethod
    def empty(cls, geometry: CacheGeometry, positions: int) -> KVCache:
        """A cache of `positions` positions in a store of its own, all zero."""
        return cls(SlotStore.create(geometry, 1, positions), 0, positions)

    @property
    def key(self) -> np.ndarray:
        """[L, H, store positions, D], a view of the store."""
        return self.store.key[:, self.slot]

    @property
    def value(self) -> np.ndarray:
        return self.store.value[:, self.slot]

    def check_room(self, n: int) -> None:
        """CacheBudgetError unless `n` more positions fit after the filled ones (the decoder writes them)."""
        if self.length + n > self.capacity:
            raise CacheBudgetError(f"cache overflow: {self.length} + {n} positions > capacity {self.capacity}")

    def move_to(self, slot: int) -> None:
        """Copies the filled positions into another (free) slot of the store and gives this one back."""
        old, n = self.slot, self.length
        self.store.key[:, slot, :, :n] = self.store.key[:, old, :, :n]
        self.store.value[:, slot, :, :n] = self.store.value[:, old, :, :n]
        self.slot = slot
        self.store.give_back(old)


class KVCachePool:
    """All live caches of one model instance, and the prefix cache's blocks (`prefix`, optional), within
    `budget_bytes`; caches placed in stores of `slots_per_store` slots of `slot_positions` positions (the model's
    context; 0: each cache a store of its own size, whose calls of several rows then copy)."""

    def __init__(self, geometry: CacheGeometry, budget_bytes: int, prefix: PrefixCache | None = None,
                 slot_positions: int = 0, slots_per_store: int = SLOTS_PER_STORE) -> None:
        self.geometry = geometry
        self.budget_bytes = int(budget_bytes)
        self.caches: dict[Hashable, KVCache] = {}
        self.reserved_bytes = 0
        self.prefix = prefix
        self.slot_positions = slot_positions
        self.slots_per_store = slots_per_store
        self.stores: list[SlotStore] = []

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
        cache = self._place(positions)
        self.caches[key] = cache
        self.reserved_bytes += need
        return cache

    def _place(self, positions: int) -> KVCache:
        """A slot in the first store with one free (a new store when none has), or a store of its own."""
        if not self.slot_positions or positions > self.slot_positions:
            return KVCache.empty(self.geometry, positions)
        for store in self.stores:
            slot = store.take()
            if slot is not None:
                return KVCache(store, slot, positions)
        try:
            store = SlotStore.create(self.geometry, self.slots_per_store, self.slot_positions)
        except OSError:  # a kernel that will not map it (strict overcommit): this cache alone, its calls copied
            return KVCache.empty(self.geometry, positions)
        self.stores.append(store)
        return KVCache(store, store.take() or 0, positions)

    def free(self, key: Hashable) -> bool:
        """Releases a request's cache (the store's last cache moves into its slot); False when it had none."""
        cache = self.caches.pop(key, None)
        if cache is None:
            return False
        self.reserved_bytes -= self.bytes_for(cache.capacity)
        store = cache.store
        if store not in self.stores:
            return True
        rest = [c for c in self.caches.values() if c.store is store]
        if not rest:
            self.stores.remove(store)  # its mapping goes with the last view
            return True
        last = max(rest, key=lambda c: c.slot)
        store.give_back(cache.slot)
        if last.slot > cache.slot:
            last.move_to(store.take() or 0)
        return True

    def __len__(self) -> int:
        return len(self.caches)

    def __contains__(self, key: Hashable) -> bool:
        return key in self.caches
