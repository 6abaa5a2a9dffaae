"""Runs the exported KV-cache decoder (see export/kv_graph.py) with onnxruntime, one batched step at a time.

`step` takes rows of (cache, new token ids) of any mix of lengths, left-pads them into one call, writes
each row's new keys/values back into its own cache, and returns the logits of each row's newest token.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .kv_cache import CacheGeometry, KVCache


@dataclass
class Row:
    """One request's part of a step: its cache and the tokens it adds (a prompt, or the last sampled token)."""

    cache: KVCache
    ids: np.ndarray


class OnnxDecoder:
    """An onnxruntime session over model.onnx (CPU unless providers say otherwise)."""

    def __init__(self, model_path: str | Path, intra_op_threads: int = 0, providers: Sequence[str] | None = None,
                 spin: bool = True) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        if intra_op_threads > 0:
            options.intra_op_num_threads = intra_op_threads
        if not spin:  # idle worker threads sleep instead of spinning: leaves the cores to the server's other work
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = ort.InferenceSession(str(model_path), sess_options=options,
                                            providers=list(providers or ["CPUExecutionProvider"]))
        inputs = {i.name: i for i in self.session.get_inputs()}
        outputs = {o.name: o for o in self.session.get_outputs()}
        missing = {"input_ids", "past_key", "past_value", "past_length", "input_length"} - set(inputs)
        if missing or not {"logits", "present_key", "present_value"} <= set(outputs):
            raise ValueError(f"{model_path} is not a KV-cache decoder (inputs {sorted(inputs)}, outputs {sorted(outputs)})")
        _, layers, heads, _, head_dim = inputs["past_key"].shape
        self.geometry = CacheGeometry(int(layers), int(heads), int(head_dim))
        self.vocab_size = int(outputs["logits"].shape[-1])
        self.output_names = ["logits", "present_key", "present_value"]
        self._scratch = np.empty(0, self.geometry.dtype)  # reused for the padded past: no fresh pages each step

    def run(self, input_ids: np.ndarray, past_key: np.ndarray, past_value: np.ndarray, past_length: np.ndarray,
            input_length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One raw call: (logits [B, V], present_key, present_value)."""
        feeds = {"input_ids": input_ids.astype(np.int64, copy=False), "past_key": past_key, "past_value": past_value,
                 "past_length": past_length.astype(np.int64, copy=False).reshape(-1, 1),
                 "input_length": input_length.astype(np.int64, copy=False).reshape(-1, 1)}
        logits, present_key, present_value = self.session.run(self.output_names, feeds)
        return logits, present_key, present_value

    def empty_past(self, batch: int) -> np.ndarray:
        g = self.geometry
        return np.zeros((batch, g.layers, g.kv_heads, 0, g.head_dim), g.dtype)

    def step(self, rows: Sequence[Row]) -> np.ndarray:
        """Runs every row's new tokens in one call; appends their keys/values to their caches; logits [B, V]."""
        g = self.geometry
        batch = len(rows)
        past = max(r.cache.length for r in rows)
        seq = max(len(r.ids) for r in rows)
        input_ids = np.zeros((batch, seq), np.int64)
        shape = (batch, g.layers, g.kv_heads, past, g.head_dim)
        size = int(np.prod(shape))
        if self._scratch.size < 2 * size:
            self._scratch = np.empty(int(2 * size * 1.5) + 1, g.dtype)
        past_key = self._scratch[:size].reshape(shape)
        past_value = self._scratch[size:2 * size].reshape(shape)
        past_length = np.empty((batch, 1), np.int64)
        input_length = np.empty((batch, 1), np.int64)
        for b, row in enumerate(rows):
            n, p = len(row.ids), row.cache.length
            input_ids[b, seq - n:] = row.ids
            past_key[b, :, :, :past - p] = 0  # padding must be finite: masked weights are 0, and 0 * NaN is NaN
            past_value[b, :, :, :past - p] = 0
            if p:
                past_key[b, :, :, past - p:] = row.cache.key[:, :, :p]
                past_value[b, :, :, past - p:] = row.cache.value[:, :, :p]
            past_length[b, 0], input_length[b, 0] = p, n
        logits, present_key, present_value = self.run(input_ids, past_key, past_value, past_length, input_length)
        end = past + seq
        for b, row in enumerate(rows):
            n = len(row.ids)
            row.cache.append(present_key[b, :, :, end - n:end], present_value[b, :, :, end - n:end])
        return logits
