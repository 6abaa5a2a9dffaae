"""Prefix reuse: the keys/values of earlier prompts, copied into a new request's cache when its prompt starts the
same way, so a shared start (a system prompt, a chat's earlier turns) is computed once, not once per request.

A trie of blocks of `BLOCK` token ids (16, as vLLM's automatic prefix caching): a node holds the keys/values of its
block's positions, computed after every block above it, so the path a prompt's first blocks spell from the root is
that prefix's cache. Matching is by token: whole blocks down the trie, then the longest common start with one of
the last node's children (part of a block is copied). A request gets copies in its own cache (`KVCache`): nothing
it writes is shared, and the decoder reads each row's past from one array anyway. At least one prompt token is
always left to compute: its logits give the first generated token.

Budget: at most `budget_bytes`, inside the pool's `kv_cache_bytes`: what the cache holds counts against the live
requests' budget, and a request that needs the memory gets it (the pool evicts blocks before it refuses anyone).
Eviction takes the least recently used leaf: a path is touched from its deepest node up, so a prefix's first
blocks, shared by the most prompts, go last.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from . import pages
from .kv_cache import CacheGeometry, KVCache

BLOCK = 16


@dataclass(eq=False)
class Node:
    """One cached block: `tokens` after its parent's, and their keys/values [L, H, BLOCK, D]."""

    tokens: tuple[int, ...]
    key: np.ndarray
    value: np.ndarray
    parent: Node | None
    children: dict[tuple[int, ...], Node] = field(default_factory=dict)


@dataclass
class Match:
    """What a prompt may reuse: nodes from the root down and how many positions of each (the last may be partial)."""

    nodes: list[tuple[Node, int]]

    @property
    def tokens(self) -> int:
        return sum(n for _, n in self.nodes)


@dataclass
class PrefixStats:
    """Counters since the start (the metrics publish their growth)."""

    hits: int = 0  # admitted requests that reused at least one position
    misses: int = 0  # admitted requests that reused none
    reused_tokens: int = 0  # prompt positions copied instead of computed
    evicted_blocks: int = 0


def block_copy(part: np.ndarray) -> np.ndarray:
    """A block's keys or values in pages of their own (`pages`: an evicted block's memory goes back at once)."""
    block = pages.zeros(part.shape, part.dtype)
    block[...] = part
    return block


class PrefixCache:
    """Cached prompt blocks within `budget_bytes` (see the module)."""

    def __init__(self, geometry: CacheGeometry, budget_bytes: int) -> None:
        self.geometry = geometry
        self.budget_bytes = int(budget_bytes)
        self.block_bytes = BLOCK * geometry.bytes_per_token
        g = geometry
        empty = np.empty((g.layers, g.kv_heads, 0, g.head_dim), g.dtype)
        self.root = Node((), empty, empty, None)
        self.lru: OrderedDict[Node, None] = OrderedDict()  # every node but the root, least recently used first
        self.stats = PrefixStats()

    @property
    def bytes(self) -> int:
        return len(self.lru) * self.block_bytes

    def __len__(self) -> int:
        return len(self.lru)

    def match(self, prompt: Sequence[int] | np.ndarray) -> Match:
        """The longest cached start of `prompt`, all but its last token at most; its nodes become the most
        recently used (a request's admission may evict blocks: not these first, and the copy holds them anyway)."""
        ids = np.asarray(prompt, np.int64).reshape(-1)
        limit = len(ids) - 1
        node, pos, nodes = self.root, 0, []
        while pos + BLOCK <= limit and (child := node.children.get(tuple(ids[pos:pos + BLOCK].tolist()))) is not None:
            nodes.append((child, BLOCK))
            node, pos = child, pos + BLOCK
        rest = ids[pos:min(limit, pos + BLOCK)]
        best, best_n = None, 0
        for child in node.children.values() if len(rest) else ():
            same = np.asarray(child.tokens[:len(rest)]) == rest
            n = len(rest) if same.all() else int(np.argmin(same))
            if n > best_n:
                best, best_n = child, n
        if best is not None:
            nodes.append((best, best_n))
        self._touch([n for n, _ in nodes])
        return Match(nodes)

    def fill(self, match: Match, cache: KVCache) -> int:
        """Copies the matched positions into an empty request cache and counts the lookup; positions copied."""
        pos = 0
        for node, n in match.nodes:
            cache.key[:, :, pos:pos + n] = node.key[:, :, :n]
            cache.value[:, :, pos:pos + n] = node.value[:, :, :n]
            pos += n
        cache.length = pos
        if pos:
            self.stats.hits += 1
            self.stats.reused_tokens += pos
        else:
            self.stats.misses += 1
        return pos

    def insert(self, ids: Sequence[int] | np.ndarray, cache: KVCache, room: int) -> int:
        """Stores the whole blocks of `ids`, whose keys/values are `cache`'s first positions, that are not cached
        yet; at most `room` bytes more than the cache holds now (what the pool has free), and within the budget:
        least recently used blocks are evicted for them. Returns the blocks added."""
        ids = np.asarray(ids, np.int64).reshape(-1)[:cache.length]
        cap = min(self.budget_bytes, self.bytes + max(0, room))
        node, added = self.root, 0
        path: list[Node] = []
        for start in range(0, len(ids) - BLOCK + 1, BLOCK):
            tokens = tuple(ids[start:start + BLOCK].tolist())
            child = node.children.get(tokens)
            if child is None:
                while self.bytes + self.block_bytes > cap and self._evict_one(protected=set(path)):
                    pass
                if self.bytes + self.block_bytes > cap:
                    break
                child = Node(tokens, block_copy(cache.key[:, :, start:start + BLOCK]),
                             block_copy(cache.value[:, :, start:start + BLOCK]), node)
                node.children[tokens] = child
                self.lru[child] = None
                added += 1
            path.append(child)
            node = child
        self._touch(path)
        return added

    def evict(self, nbytes: int) -> int:
        """Frees at least `nbytes` (or everything), least recently used leaves first; bytes freed."""
        before = self.bytes
        while before - self.bytes < nbytes and self._evict_one(protected=set()):
            pass
        return before - self.bytes

    def _touch(self, path: list[Node]) -> None:
        for node in reversed(path):  # deepest first: the first blocks end up the most recent
            self.lru.move_to_end(node)

    def _evict_one(self, protected: set[Node]) -> bool:
        victim = next((n for n in self.lru if not n.children and n not in protected), None)
        if victim is None:
            return False
        del self.lru[victim]
        assert victim.parent is not None
        del victim.parent.children[victim.tokens]
        self.stats.evicted_blocks += 1
        return True
