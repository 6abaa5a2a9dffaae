"""What perf_analyzer sends while Model Analyzer profiles: the model's golden samples when it has them,
else random data, with variable dimensions pinned so perf_analyzer can build a request.

Real data matters: random token ids or strings can crash a model that random floats would not.
"""
import base64
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tritonkit.golden import read_cases
from tritonkit.spec.model import ModelSpec

#: Size given to a variable (-1) dimension when no golden sample shows a real one.
VARIABLE_DIM_DEFAULT = 16


@dataclass(frozen=True)
class PerfInputs:
    """perf_analyzer flags for one model, and a note when the data is synthetic."""

    flags: dict[str, object] = field(default_factory=dict)
    note: str | None = None


def _first_request(golden_dir: Path) -> dict[str, np.ndarray] | None:
    if not golden_dir.is_dir():
        return None
    for case in read_cases(golden_dir):
        if case.kind == "request" and case.steps and case.steps[0][0]:
            return case.steps[0][0]
    return None


def _tensor(row: np.ndarray) -> dict:
    """One tensor as perf_analyzer reads it: its values, or for bytes that are not text (an encoded image) the
    serialized tensor in base64 (each element's 4-byte little-endian length, then its bytes), sent as it is."""
    flat, shape = row.reshape(-1), list(row.shape)
    if flat.dtype != object and flat.dtype.kind not in "SU":
        return {"content": flat.tolist(), "shape": shape}
    items = [v if isinstance(v, bytes) else str(v).encode() for v in flat]
    try:
        return {"content": [v.decode() for v in items], "shape": shape}
    except UnicodeDecodeError:
        packed = b"".join(struct.pack("<I", len(v)) + v for v in items)
        return {"b64": base64.b64encode(packed).decode(), "shape": shape}


def input_data_json(sample: dict[str, np.ndarray], batched: bool) -> dict:
    """perf_analyzer's `--input-data` document for one request of batch size 1 (first row of a batched sample)."""
    rows = {name: np.asarray(value[0] if batched and value.ndim > 0 else value) for name, value in sample.items()}
    return {"data": [{name: _tensor(row) for name, row in rows.items()}]}


def perf_inputs(name: str, spec: ModelSpec, built_model_dir: Path, out_dir: Path) -> PerfInputs:
    """Flags for the model's requests: `input-data` from its first golden request, else `shape` for variable dims."""
    sample = _first_request(built_model_dir / "golden")
    if sample is not None:
        path = out_dir / f"{name}-input-data.json"
        path.write_text(json.dumps(input_data_json(sample, spec.max_batch_size > 0)))
        return PerfInputs({"input-data": str(path)})
    shapes = [f"{t.name}:{','.join(str(VARIABLE_DIM_DEFAULT if d < 0 else d) for d in t.dims)}"
              for t in spec.input if any(d < 0 for d in t.dims)]
    if not shapes:
        return PerfInputs()
    return PerfInputs({"shape": shapes}, note=f"'{name}' has variable input dims and no smoke case: profiling with "
                      f"{' '.join(shapes)} (add a smoke case to profile with real data)")
