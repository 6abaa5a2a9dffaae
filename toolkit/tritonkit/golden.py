"""Golden samples: known input/output pairs saved with a model so any deployment can be replayed.

Layout under `<model>/golden/` (Triton ignores non-numeric folders of a model directory):
- `NNN.npz` / `caseNNN.npz`, one request: keys `input:<name>`, `output:<name>`;
- a sequence: keys `step:<k>:input:<name>`, `step:<k>:output:<name>`;
- a stream (decoupled model): keys `input:<name>`, `response:<k>:output:<name>`;
- optional per-file `tol:atol` / `tol:rtol`, else `tolerance.json` ({"default": {...}, "outputs": {...}}).
Strings are stored as fixed-width bytes and come back as object arrays, as tritonclient sends them.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

Tensors = dict[str, np.ndarray]
DEFAULT_TOLERANCE = {"atol": 1e-5, "rtol": 1e-5}


@dataclass
class GoldenCase:
    """One replayable case; `steps` holds (inputs, expected outputs) per request (one for request/stream)."""

    name: str
    kind: Literal["request", "sequence", "stream"]
    steps: list[tuple[Tensors, Tensors]]
    responses: list[Tensors] = field(default_factory=list)
    atol: float | None = None
    rtol: float | None = None

    def to_arrays(self) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for k, (inputs, outputs) in enumerate(self.steps):
            prefix = f"step:{k}:" if self.kind == "sequence" else ""
            out |= {f"{prefix}input:{n}": _storable(v) for n, v in inputs.items()}
            out |= {f"{prefix}output:{n}": _storable(v) for n, v in outputs.items()}
        for k, response in enumerate(self.responses):
            out |= {f"response:{k}:output:{n}": _storable(v) for n, v in response.items()}
        out |= {f"tol:{k}": np.array(v) for k, v in (("atol", self.atol), ("rtol", self.rtol)) if v is not None}
        return out


def tolerance_json(tolerance: Any, output_names: list[str]) -> dict[str, Any]:
    """The tolerance.json payload from an export's ToleranceSpec (per-output entries only where given)."""
    default = {"atol": tolerance.atol, "rtol": tolerance.rtol}
    outputs = {n: {"atol": t.atol, "rtol": t.rtol} for n, t in tolerance.outputs.items() if n in output_names}
    return {"default": default, "outputs": outputs}


def clear(golden_dir: Path) -> None:
    """Removes samples a previous export left (stale pairs must not be replayed)."""
    if golden_dir.is_dir():
        for old in [*golden_dir.glob("*.npz"), golden_dir / "tolerance.json"]:
            old.unlink(missing_ok=True)


def write_pairs(golden_dir: Path, pairs: list[tuple[Tensors, Tensors]], tolerance: dict[str, Any]) -> list[Path]:
    """Replaces the folder's samples with verified request pairs `NNN.npz` and their tolerance.json."""
    clear(golden_dir)
    written = write_cases(golden_dir, [GoldenCase(f"{i:03d}", "request", [pair]) for i, pair in enumerate(pairs)])
    tol_path = golden_dir / "tolerance.json"
    tol_path.write_text(json.dumps(tolerance, indent=2, sort_keys=True) + "\n")
    return [*written, tol_path]


def _storable(value: np.ndarray) -> np.ndarray:
    """Object arrays of str/bytes become fixed-width bytes (npz without pickle)."""
    if value.dtype == object:
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in value.reshape(-1)]
        return np.array(flat).reshape(value.shape)
    return value


def _loaded(value: np.ndarray) -> np.ndarray:
    return value.astype(object) if value.dtype.kind in "SU" else value


def write_cases(golden_dir: Path, cases: list[GoldenCase]) -> list[Path]:
    golden_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for case in cases:
        path = golden_dir / f"{case.name}.npz"
        np.savez(path, **case.to_arrays())
        paths.append(path)
    return paths


def read_cases(golden_dir: Path) -> list[GoldenCase]:
    """Every case in a golden folder, in file-name order; `tolerance_for` resolves their tolerances per output."""
    cases = []
    for path in sorted(golden_dir.glob("*.npz")):
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: _loaded(data[k]) for k in data.files}
        cases.append(_case_from_arrays(path.stem, arrays))
    return cases


def _case_from_arrays(name: str, arrays: dict[str, np.ndarray]) -> GoldenCase:
    atol = float(arrays.pop("tol:atol")) if "tol:atol" in arrays else None
    rtol = float(arrays.pop("tol:rtol")) if "tol:rtol" in arrays else None
    if any(k.startswith("step:") for k in arrays):
        count = 1 + max(int(k.split(":")[1]) for k in arrays)
        steps = [(_pick(arrays, f"step:{k}:input:"), _pick(arrays, f"step:{k}:output:")) for k in range(count)]
        return GoldenCase(name, "sequence", steps, atol=atol, rtol=rtol)
    if any(k.startswith("response:") for k in arrays):
        count = 1 + max(int(k.split(":")[1]) for k in arrays if k.startswith("response:"))
        responses = [_pick(arrays, f"response:{k}:output:") for k in range(count)]
        return GoldenCase(name, "stream", [(_pick(arrays, "input:"), {})], responses, atol, rtol)
    return GoldenCase(name, "request", [(_pick(arrays, "input:"), _pick(arrays, "output:"))], atol=atol, rtol=rtol)


def _pick(arrays: dict[str, np.ndarray], prefix: str) -> Tensors:
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def read_tolerances(golden_dir: Path) -> dict[str, Any]:
    """The folder's tolerance.json ({} without one), read once per folder and passed to `tolerance_for`."""
    path = golden_dir / "tolerance.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def tolerance_for(table: dict[str, Any], case: GoldenCase, output: str) -> dict[str, float]:
    """atol/rtol for one output: the case's own, else the folder's `read_tolerances` per-output or default,
    else 1e-5."""
    own = {k: v for k, v in (("atol", case.atol), ("rtol", case.rtol)) if v is not None}
    return dict(DEFAULT_TOLERANCE) | table.get("default", {}) | table.get("outputs", {}).get(output, {}) | own
