"""Comparisons the smoke test makes: served config vs repository config, outputs vs expected values."""
from collections.abc import Mapping
from typing import Any

import numpy as np
from tritonclient.utils import triton_to_np_dtype

from tritonkit.export.verify import beyond_tolerance, differences
from tritonkit.serve.onnx_model import ONNX_FILE_PARAMETER
from tritonkit.triton.model_config import pb


def _tensors(tensors) -> list[tuple[str, str, list[int]]]:
    return [(t.name, pb.DataType.Name(t.data_type), list(t.dims)) for t in tensors]


def _scheduler(c: pb.ModelConfig) -> str:
    return c.WhichOneof("scheduling_choice") or "default"


def config_differences(expected: pb.ModelConfig, served: pb.ModelConfig) -> list[str]:
    """Fields that clients depend on and that differ between the repository and the server."""
    diffs = []
    checks = [
        ("max_batch_size", expected.max_batch_size, served.max_batch_size),
        ("input", _tensors(expected.input), _tensors(served.input)),
        ("output", sorted(_tensors(expected.output)), sorted(_tensors(served.output))),
        ("scheduler", _scheduler(expected), _scheduler(served)),
        ("decoupled", expected.model_transaction_policy.decoupled, served.model_transaction_policy.decoupled),
    ]
    for field, want, got in checks:
        if want != got:
            diffs.append(f"{field}: repository {want} vs served {got}")
    return diffs


def fallback_for(expected: pb.ModelConfig, served: pb.ModelConfig) -> str | None:
    """The declared platform/backend when the server runs tritonkit's onnxruntime fallback in its place, else None.

    The served config tells, so this holds for any server: the fallback is a Python-backend model carrying
    the `tritonkit_onnx_file` parameter, while a real Triton reports the declared backend.
    """
    declared = expected.platform or expected.backend
    fallback = served.backend == "python" and ONNX_FILE_PARAMETER in served.parameters
    return declared if declared and expected.backend != "python" and fallback else None


def metadata_differences(expected: pb.ModelConfig, metadata: dict[str, Any]) -> list[str]:
    """Inputs/outputs in the metadata must carry the config's names, types and shapes (batch dim as -1)."""
    batch = [-1] if expected.max_batch_size > 0 else []
    diffs = []
    for kind, tensors in (("inputs", expected.input), ("outputs", expected.output)):
        want = sorted((t.name, pb.DataType.Name(t.data_type)[len("TYPE_"):].replace("STRING", "BYTES"),
                       batch + list(t.dims)) for t in tensors)
        got = sorted((t["name"], t["datatype"], [int(d) for d in t.get("shape", [])]) for t in metadata.get(kind, []))
        if want != got:
            diffs.append(f"{kind}: expected {want}, served {got}")
    return diffs


def _datatype(tensor: pb.ModelOutput) -> str:
    """The config's data type as the protocols name it (`FP32`, `BYTES` for TYPE_STRING)."""
    return pb.DataType.Name(tensor.data_type)[len("TYPE_"):].replace("STRING", "BYTES")


def declared_mismatches(config: pb.ModelConfig, got: Mapping[str, np.ndarray | None], batch: int | None,
                        every: bool = True) -> list[str]:
    """Outputs not of the config's data type and shape, and (`every`) outputs missing: a -1 dim takes any size, a
    batching model's first dimension is the request's batch size (`batch`; None: any). The server does not check
    what a Python model returns, so a model answering 3 values for `dims: [2]` reaches the client as it is."""
    lead = [-1 if batch is None else batch] if config.max_batch_size > 0 else []
    problems = []
    for tensor in config.output:
        value, want, datatype = got.get(tensor.name), lead + list(tensor.dims), _datatype(tensor)
        if value is None:
            problems += [f"output '{tensor.name}' missing from the response"] if every else []
            continue
        if value.dtype != np.dtype(triton_to_np_dtype(datatype)):
            problems.append(f"output '{tensor.name}' came as {value.dtype}, the config declares {datatype}")
        if len(value.shape) != len(want) or any(w not in (-1, g) for w, g in zip(want, value.shape)):
            problems.append(f"output '{tensor.name}' has shape {list(value.shape)}, the config declares {want}")
    return problems


def value_mismatch(name: str, expected: np.ndarray, actual: np.ndarray | None, atol: float, rtol: float) -> str | None:
    """None when `actual` matches `expected` within tolerance, else a one-line description."""
    if actual is None:
        return f"output '{name}' missing from the response"
    if expected.shape != actual.shape:  # strings too: the same words in another shape are another answer
        return f"output '{name}': expected shape {list(expected.shape)}, got {list(actual.shape)}"
    if expected.dtype == object or actual.dtype == object:
        want = [v.decode() if isinstance(v, bytes) else str(v) for v in expected.reshape(-1)]
        got = [v.decode() if isinstance(v, bytes) else str(v) for v in actual.reshape(-1)]
        return None if want == got else f"output '{name}': expected {want[:4]}, got {got[:4]}"
    if expected.dtype.kind == "b" or actual.dtype.kind == "b":
        return None if np.array_equal(expected, actual) else f"output '{name}': boolean values differ"
    _, _, diff = differences(actual, expected)
    if not beyond_tolerance(diff, expected, atol, rtol).any():
        return None
    return (f"output '{name}' shape {list(expected.shape)}: max abs error {diff.max():.3g}"
            f" > atol {atol:g} + rtol {rtol:g}")
