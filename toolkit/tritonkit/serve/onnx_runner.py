"""Runs an ONNX model with onnxruntime on the CPU for a batch of Triton requests at once.

This is the body of the embedded server's ONNX fallback (the embedded server has no onnxruntime
backend). It imports only numpy and onnxruntime because it is copied next to the generated `model.py`
and imported inside the Triton Python-backend stub, where tritonkit itself need not be installed.

Batching: requests that agree on every non-batch dimension and dtype are concatenated along the batch
dimension, run once, and the outputs are split back, so Triton's dynamic batcher pays off.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

Feeds = dict[str, np.ndarray]


@dataclass(frozen=True)
class RunnerOptions:
    """Session options; 0 intra-op threads means onnxruntime's own default (all cores).

    Idle onnxruntime workers spin by default, which on a few shared cores takes CPU from the other instances
    and from the stub moving tensors; `spin=False` lets them sleep (the served default).
    """

    intra_op_threads: int = 0
    inter_op_threads: int = 1
    spin: bool = True


def _string_to_int(value: str | None, default: int = 0) -> int:
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        return default


def instance_count(config: dict[str, Any]) -> int:
    """Copies of the model Triton runs (JSON form of the config); at least 1."""
    return sum(max(int(g.get("count", 1)), 1) for g in config.get("instance_group", [])) or 1


def options_from_config(config: dict[str, Any], cpu_count: int | None = None) -> RunnerOptions:
    """Reads the onnxruntime backend's own parameter names from a model config (JSON form).

    Without `intra_op_thread_count` the cores are split over the instances of *this* config, so a variant
    with more instances (Model Analyzer's, or a tuned one) does not oversubscribe the CPU.
    """
    params = config.get("parameters", {})

    def param(key: str) -> str | None:
        return params.get(key, {}).get("string_value")

    cores = cpu_count or os.cpu_count() or 1
    intra = _string_to_int(param("intra_op_thread_count")) or max(1, cores // instance_count(config))
    spin = (param("allow_spinning") or "0").strip().lower() not in ("0", "false")
    return RunnerOptions(intra_op_threads=intra, inter_op_threads=_string_to_int(param("inter_op_thread_count"), 1),
                         spin=spin)


class OnnxRunner:
    """One onnxruntime session serving Triton requests, batched or not."""

    def __init__(self, model_path: str | Path, output_names: Sequence[str], *, batched: bool,
                 options: RunnerOptions = RunnerOptions()) -> None:
        import onnxruntime as ort

        so = ort.SessionOptions()
        if options.intra_op_threads > 0:
            so.intra_op_num_threads = options.intra_op_threads
        if options.inter_op_threads > 0:
            so.inter_op_num_threads = options.inter_op_threads
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL  # one request batch at a time: no inter-op pool work
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if not options.spin:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model_path), sess_options=so, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.session.get_inputs()]
        known = {o.name for o in self.session.get_outputs()}
        missing = [n for n in output_names if n not in known]
        if missing:
            raise ValueError(f"outputs {missing} are not produced by {model_path} (it has {sorted(known)})")
        self.output_names = list(output_names) or [o.name for o in self.session.get_outputs()]
        self.batched = batched

    @classmethod
    def from_model_config(cls, config: dict[str, Any], version_dir: str | Path,
                          onnx_file: str = "model.onnx") -> OnnxRunner:
        """Builds the runner from a Triton model config in its JSON form (as the Python backend gives it)."""
        outputs = [o["name"] for o in config.get("output", [])]
        return cls(Path(version_dir) / onnx_file, outputs, batched=int(config.get("max_batch_size", 0)) > 0,
                   options=options_from_config(config))

    def run(self, feeds: Feeds) -> Feeds:
        """One inference on exactly these inputs."""
        given = {name: _to_ort(feeds[name]) for name in self.input_names if name in feeds}
        values = self.session.run(self.output_names, given)
        return {name: _from_ort(v) for name, v in zip(self.output_names, values)}

    def run_requests(self, requests: Sequence[Feeds]) -> list[Feeds | Exception]:
        """Results in request order; a failing request gets its exception without failing the others."""
        results: list[Feeds | Exception | None] = [None] * len(requests)
        for group in self._groups(requests):
            if len(group) == 1 or not self.batched:
                for i in group:
                    results[i] = self._run_one(requests[i])
                continue
            merged: list[Feeds | Exception]
            try:
                merged = self._run_merged([requests[i] for i in group])
            except Exception:  # isolate the culprit: run the group's requests one by one
                merged = [self._run_one(requests[i]) for i in group]
            for i, result in zip(group, merged):
                results[i] = result
        return results  # type: ignore[return-value]

    def _run_one(self, feeds: Feeds) -> Feeds | Exception:
        try:
            return self.run(feeds)
        except Exception as err:  # reported to that request's client
            return err

    def _groups(self, requests: Sequence[Feeds]) -> list[list[int]]:
        """Indices of requests that can share one run: same names, dtypes and non-batch dims."""
        groups: dict[tuple, list[int]] = {}
        for i, feeds in enumerate(requests):
            key = tuple((n, feeds[n].dtype.str, feeds[n].shape[1:]) if n in feeds else (n,) for n in self.input_names)
            groups.setdefault(key, []).append(i)
        return list(groups.values())

    def _run_merged(self, requests: Sequence[Feeds]) -> list[Feeds | Exception]:
        sizes = [_batch_size(r, self.input_names) for r in requests]
        names = [n for n in self.input_names if n in requests[0]]
        outputs = self.run({n: np.concatenate([r[n] for r in requests], axis=0) for n in names})
        total = sum(sizes)
        for name, value in outputs.items():
            if value.ndim == 0 or value.shape[0] != total:
                raise ValueError(f"output {name!r} has shape {value.shape}, not batch-first with {total} rows")
        cuts = np.cumsum(sizes)[:-1]
        split = {name: np.split(value, cuts, axis=0) for name, value in outputs.items()}
        return [{name: parts[i] for name, parts in split.items()} for i in range(len(requests))]


def _batch_size(feeds: Feeds, names: Sequence[str]) -> int:
    sizes = {feeds[n].shape[0] for n in names if n in feeds and feeds[n].ndim > 0}
    if len(sizes) != 1:
        raise ValueError(f"inputs disagree on the batch size: {sorted(sizes)}")
    return sizes.pop()


def _to_ort(value: np.ndarray) -> np.ndarray:
    """Triton hands string tensors over as bytes objects; onnxruntime wants str."""
    if value.dtype == np.object_:
        flat = [v.decode("utf-8") if isinstance(v, bytes) else v for v in value.ravel()]
        return np.array(flat, dtype=np.object_).reshape(value.shape)
    return value


def _from_ort(value: Any) -> np.ndarray:
    value = np.asarray(value)
    if value.dtype == np.object_ or value.dtype.kind == "U":
        flat = [v.encode("utf-8") if isinstance(v, str) else v for v in value.ravel()]
        return np.array(flat, dtype=np.object_).reshape(value.shape)
    return value
