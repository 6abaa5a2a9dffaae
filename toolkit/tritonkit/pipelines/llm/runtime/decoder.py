"""Runs the exported KV-cache decoder (see export/kv_graph.py) with onnxruntime, one batched step at a time.

`step` takes rows of (cache, new token ids) of any mix of lengths, pads them into one call, has each row's new
keys/values written into its own cache, and returns the logits of each row's newest token; `tails` returns the logits
of each row's last few tokens (a row verifying drafted tokens asks for one more than it drafted).

Memory: the graph's attention (onnxruntime's GroupQueryAttention) writes the new keys/values into its present
outputs, which are bound to the memory of its past inputs, so a call reads and writes caches in place. Rows whose
caches live in one store (`kv_cache.SlotStore`: the engine's caches, side by side) run as one call over the block of
slots from their lowest to their highest, that block bound as each layer's past and present: nothing is copied in
or out, and positions not filled yet cost nothing, since the attention reads each row's filled positions only (a
slot in the block that is not a row's runs idle: no new tokens, nothing written). Rows of different stores (caches
made alone, `KVCache.empty`) are copied: their filled positions into one padded past with room for the new tokens
(in a buffer reused from call to call, layer by layer so each layer's part is bound as its input), their new entries
back after the call; the buffer follows what recent calls needed and is released when the engine has nothing to run
(`release`), with the heap's free pages. In place, a step of 8 SmolLM2 rows takes about a fifth less time than
copied.
onnxruntime runs without its CPU arena: a call's intermediates come from malloc and go back to it when the call
ends, where the arena would keep its largest call's growth, rounded up to powers of two, until the engine is idle
(lower peak memory, no measurable cost in speed).
"""
import ctypes
import functools
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import pages
from .kv_cache import SPARE_POSITIONS, CacheGeometry, KVCache, SlotStore


@dataclass
class Row:
    """One request's part of a step: its cache and the tokens it adds (a prompt, or the last sampled token)."""

    cache: KVCache
    ids: np.ndarray
    logits: int = 1  # of how many of its last tokens the call returns the logits


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def trim_heap() -> None:
    """Hands the heap's free pages back to the system: glibc keeps what numpy and onnxruntime freed below its
    mmap threshold (up to 32 MiB a block; ~75 MiB for SmolLM2 after a long prompt). No-op elsewhere."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


class Reused:
    """A buffer reused by every call, sized to the largest need of the last `window` calls: grown to 1.5x that
    when a call needs more, cut back to it when it holds over 4x, so a peak (a long prompt) is not kept."""

    def __init__(self, dtype: np.dtype, window: int = 32) -> None:
        self.array = pages.zeros(0, dtype)
        self.needs: deque[int] = deque(maxlen=window)

    def take(self, size: int) -> np.ndarray:
        """`size` elements, contents undefined."""
        self.needs.append(size)
        peak = max(self.needs)
        if self.array.size < size or self.array.size > 4 * peak + 1:
            self.array = pages.zeros(int(1.5 * peak) + 1, self.array.dtype)
        return self.array[:size]

    def release(self) -> None:
        self.array = pages.zeros(0, self.array.dtype)
        self.needs.clear()


class OnnxDecoder:
    """An onnxruntime session over model.onnx (CPU unless providers say otherwise)."""

    def __init__(self, model_path: str | Path, intra_op_threads: int = 0, providers: Sequence[str] | None = None,
                 spin: bool = True, spin_duration_us: int | None = None, huge_pages: bool = True) -> None:
        """`spin`: idle worker threads spin waiting for work (onnxruntime's default) or sleep at once;
        `spin_duration_us`: how long they spin before sleeping (onnxruntime >= 1.26; None: its default). A short
        spin hands work between a call's nodes without a wake-up, and leaves the cores to the server's other
        processes between calls. `huge_pages`: once the session holds the weights, they go onto 2 MiB pages
        (`pages.to_huge_pages`: a decode step reads them whole)."""
        import onnxruntime as ort

        options = ort.SessionOptions()
        if intra_op_threads > 0:
            options.intra_op_num_threads = intra_op_threads
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        elif spin_duration_us is not None:
            options.add_session_config_entry("session.intra_op.spin_duration_us", str(spin_duration_us))
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_cpu_mem_arena = False  # see the module's docstring
        self.session = ort.InferenceSession(str(model_path), sess_options=options,
                                            providers=list(providers or ["CPUExecutionProvider"]))
        #: bytes moved onto 2 MiB pages at load (0: not asked, or the kernel refused)
        self.huge_page_bytes = pages.to_huge_pages() if huge_pages else 0
        inputs = {i.name: i for i in self.session.get_inputs()}
        outputs = {o.name: o for o in self.session.get_outputs()}
        layers = sum(name.startswith("past_key_") for name in inputs)
        self.past_names = [f"past_key_{i}" for i in range(layers)] + [f"past_value_{i}" for i in range(layers)]
        present_names = [name.replace("past_", "present_", 1) for name in self.past_names]
        missing = {"input_ids", "past_length", "input_length", "past_key_0", *self.past_names} - set(inputs)
        if missing or not {"logits", *present_names} <= set(outputs):
            raise ValueError(f"{model_path} is not a KV-cache decoder with per-layer past inputs and present outputs "
                             f"(inputs {sorted(inputs)}, outputs {sorted(outputs)}; see export/kv_graph.py)")
        self.present_names = present_names
        #: whether the graph gives the logits of several tokens a row (its `logit_index` input), as verifying
        #: drafted tokens needs; a graph exported before it had that input gives the last token's only
        self.verifies = "logit_index" in inputs
        if self.verifies and isinstance(inputs["logit_index"].shape[-1], int):
            raise ValueError(f"{model_path}: input logit_index has a fixed width ({inputs['logit_index'].shape[-1]}); "
                             "export it with a dynamic one: dynamic_axes {logit_index: {1: tails}}")
        _, heads, _, head_dim = inputs["past_key_0"].shape
        self.geometry = CacheGeometry(layers, int(heads), int(head_dim))
        self.vocab_size = int(outputs["logits"].shape[-1])
        self.past = Reused(self.geometry.dtype)  # the padded past of a call of several rows (keys, then values)
        #: per store, its blocks' bindings by (first slot, slots); dropped with the store
        self._store_bindings: weakref.WeakKeyDictionary[SlotStore, dict[tuple[int, int], Any]] = \
            weakref.WeakKeyDictionary()

    def release(self) -> None:
        """Gives memory back when nothing runs: the reused buffer and the heap's free pages (onnxruntime's freed
        intermediates among them)."""
        self.past.release()
        trim_heap()

    def step(self, rows: Sequence[Row]) -> np.ndarray:
        """Runs every row's new tokens; their keys/values go into their caches; logits [B, V] of each row's last
        token, in the rows' order."""
        return self.tails(rows)[:, -1]

    def tails(self, rows: Sequence[Row]) -> np.ndarray:
        """As `step`, with the logits of each row's last `row.logits` tokens: [B, K, V] (K the most any row asks
        for; a row that asks for fewer has its first token's repeated before them). Rows whose caches share a store
        run in place, one call per block of nearby slots; others are copied."""
        width = max(row.logits for row in rows)
        if width > 1 and not self.verifies:
            raise ValueError("this decoder graph gives the last token's logits only (no logit_index input): rebuild "
                             "the model to verify drafted tokens")
        for row in rows:
            row.cache.check_room(len(row.ids))
        store = rows[0].cache.store
        if any(row.cache.store is not store for row in rows):
            return self._copied(rows, width)
        seq = max(len(row.ids) for row in rows)
        # a row near the end of its slot has no room for the call's padding: it runs alone, unpadded (the graph's
        # attention takes one position more: export/kv_graph.py)
        alone = [i for i, row in enumerate(rows) if row.cache.length + seq + SPARE_POSITIONS > store.positions]
        together = sorted((i for i in range(len(rows)) if i not in alone), key=lambda i: rows[i].cache.slot)
        blocks = [*_blocks(together, rows), *([i] for i in alone)]
        if len(blocks) == 1 and blocks[0] == list(range(len(rows))):
            return self._in_place(store, rows, width)   # one call in the rows' order: its logits as they are
        logits = np.empty((len(rows), width, self.vocab_size), np.float32)
        for block in blocks:
            logits[block] = self._in_place(store, [rows[i] for i in block], width)
        return logits

    def _in_place(self, store: SlotStore, rows: Sequence[Row], width: int) -> np.ndarray:
        """One call over the store's slots from the rows' lowest to their highest, bound as past and present: the
        new entries are written into the caches; a slot in between that is not a row's runs idle (no new tokens,
        nothing written, its logits ignored)."""
        first = min(row.cache.slot for row in rows)
        batch = max(row.cache.slot for row in rows) - first + 1
        inputs = _inputs(rows, [row.cache.slot - first for row in rows], batch, width)
        self.past.take(0)  # a call without a padded past: the buffer's window forgets the larger calls
        logits = self._run(self._block_binding(store, first, batch), inputs)
        for row in rows:
            row.cache.length += len(row.ids)
        offsets = [row.cache.slot - first for row in rows]
        # the rows are the call's slots in order (no idle slot between them): no copy of their logits
        return logits if offsets == list(range(batch)) else logits[offsets]

    def _copied(self, rows: Sequence[Row], width: int) -> np.ndarray:
        """One call over a padded copy of the rows' filled positions; their new entries copied back after it."""
        inputs = _inputs(rows, range(len(rows)), len(rows), width)
        pasts = self._padded(rows, inputs["input_ids"].shape[1])
        logits = self._run(self._bound(pasts), inputs)
        layers = self.geometry.layers
        for b, row in enumerate(rows):
            p, n = row.cache.length, len(row.ids)
            for i in range(layers):
                row.cache.key[i, :, p:p + n] = pasts[i][b, :, p:p + n]
                row.cache.value[i, :, p:p + n] = pasts[layers + i][b, :, p:p + n]
            row.cache.length += n
        return logits

    def _block_binding(self, store: SlotStore, first: int, batch: int) -> Any:
        """The binding of slots [first, first + batch) of `store` as every layer's past and present, made once per
        block and kept with the store: binding SmolLM2's 60 pasts and presents costs ~0.5 ms a call (7% of an int4
        decode step), and a block's memory stays where it is while its store lives."""
        blocks = self._store_bindings.setdefault(store, {})
        if (first, batch) not in blocks:
            block = slice(first, first + batch)
            blocks[first, batch] = self._bound([*store.key[:, block], *store.value[:, block]])
        return blocks[first, batch]

    def _bound(self, pasts: Sequence[np.ndarray]) -> Any:
        """A new IO binding with `pasts` as the past inputs and as the present outputs (written in place)."""
        binding = self.session.io_binding()
        for name, past in zip(self.past_names, pasts):
            binding.bind_cpu_input(name, past)
        for name, present in zip(self.present_names, pasts):
            _bind_output(binding, name, present)
        return binding

    def _run(self, binding: Any, inputs: dict[str, np.ndarray]) -> np.ndarray:
        """One session call over `binding`'s pasts with this call's tokens, lengths and logit indexes (`_inputs`); the
        logits [B, K, V]."""
        index = inputs["logit_index"]
        logits = np.empty((*index.shape, self.vocab_size), np.float32)
        for name, value in inputs.items():
            if name != "logit_index" or self.verifies:
                binding.bind_cpu_input(name, value)  # replaces the previous call's tensor of that name
        _bind_output(binding, "logits", logits if self.verifies else logits[:, 0])
        self.session.run_with_iobinding(binding)
        return logits

    def _padded(self, rows: Sequence[Row], seq: int) -> list[np.ndarray]:
        """The rows' filled positions copied into one past with room for `seq` new tokens after the longest (and the
        spare positions of a paired query), each
        layer's [B, H, P, D] (in the reused buffer, layer-major so that each layer's part is contiguous and bound
        as its input and output without a copy). Positions past a row's filled ones are left as they are: the
        attention reads only a row's filled and new positions."""
        g = self.geometry
        past = max(r.cache.length for r in rows) + seq + SPARE_POSITIONS
        shape = (g.layers, len(rows), g.kv_heads, past, g.head_dim)
        size = int(np.prod(shape))
        scratch = self.past.take(2 * size)
        past_key, past_value = scratch[:size].reshape(shape), scratch[size:].reshape(shape)
        for b, row in enumerate(rows):
            p = row.cache.length
            past_key[:, b, :, :p] = row.cache.key[:, :, :p]
            past_value[:, b, :, :p] = row.cache.value[:, :, :p]
        return [*past_key, *past_value]


def _bind_output(binding: Any, name: str, array: np.ndarray) -> None:
    """`array`'s memory as output `name` of `binding` (onnxruntime writes it there)."""
    binding.bind_output(name, "cpu", 0, array.dtype.type, list(array.shape), array.__array_interface__["data"][0])


def _inputs(rows: Sequence[Row], indexes: Sequence[int], batch: int, width: int) -> dict[str, np.ndarray]:
    """input_ids [batch, S] right-padded, past_length and input_length [batch, 1], logit_index [batch, width] (each
    row's last `row.logits` tokens, right-aligned) with row i at `indexes[i]`; the other indexes idle (one past
    position, no new tokens: nothing written)."""
    seq = max(len(row.ids) for row in rows)
    input_ids = np.zeros((batch, seq), np.int64)
    past_length = np.ones((batch, 1), np.int64)
    input_length = np.zeros((batch, 1), np.int64)
    logit_index = np.zeros((batch, width), np.int64)
    for b, row in zip(indexes, rows):
        input_ids[b, :len(row.ids)] = row.ids
        past_length[b, 0], input_length[b, 0] = row.cache.length, len(row.ids)
        logit_index[b] = np.maximum(np.arange(len(row.ids) - width, len(row.ids)), len(row.ids) - row.logits)
    return {"input_ids": input_ids, "past_length": past_length, "input_length": input_length,
            "logit_index": logit_index}


#: Idle slots a call over one block of a store may span between two rows (each costs about what a row does).
MAX_IDLE = 1


def _blocks(order: Sequence[int], rows: Sequence[Row]) -> list[list[int]]:
    """Row indexes in slot order, split where more than MAX_IDLE slots lie between two rows."""
    blocks: list[list[int]] = []
    for i in order:
        if blocks and rows[i].cache.slot - rows[blocks[-1][-1]].cache.slot <= MAX_IDLE + 1:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    return blocks
