"""Golden samples: verified input/output pairs saved next to the model so any deployment can be replayed.

Layout (docs/DESIGN.md): `<model>/golden/NNN.npz` with keys `input:<name>` and `output:<name>`, and
`<model>/golden/tolerance.json` = {"default": {"atol", "rtol"}, "outputs": {name: {"atol", "rtol"}}}.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

Pair = tuple[dict[str, np.ndarray], dict[str, np.ndarray]]


def tolerance_json(tolerance: Any, output_names: list[str]) -> dict[str, Any]:
    """The tolerance.json payload from a ToleranceSpec (per-output entries only where they differ)."""
    default = {"atol": tolerance.atol, "rtol": tolerance.rtol}
    outputs = {n: {"atol": t.atol, "rtol": t.rtol} for n, t in tolerance.outputs.items() if n in output_names}
    return {"default": default, "outputs": outputs}


def clear(golden_dir: Path) -> None:
    """Removes samples a previous export left (stale pairs must not be replayed)."""
    if golden_dir.is_dir():
        for old in [*golden_dir.glob("[0-9][0-9][0-9].npz"), golden_dir / "tolerance.json"]:
            old.unlink(missing_ok=True)


def write(golden_dir: Path, pairs: list[Pair], tolerance: dict[str, Any]) -> list[Path]:
    """Writes NNN.npz per pair and tolerance.json; returns the written paths."""
    clear(golden_dir)
    golden_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for number, (inputs, outputs) in enumerate(pairs):
        path = golden_dir / f"{number:03d}.npz"
        arrays = {f"input:{k}": v for k, v in inputs.items()} | {f"output:{k}": v for k, v in outputs.items()}
        np.savez(path, **arrays)
        written.append(path)
    tol_path = golden_dir / "tolerance.json"
    tol_path.write_text(json.dumps(tolerance, indent=2, sort_keys=True) + "\n")
    return [*written, tol_path]


def read(golden_dir: Path) -> tuple[list[Pair], dict[str, Any]]:
    """The pairs and tolerance of a golden folder (for smoke tests that replay them)."""
    pairs: list[Pair] = []
    for path in sorted(golden_dir.glob("[0-9][0-9][0-9].npz")):
        with np.load(path) as data:
            inputs = {k.split(":", 1)[1]: data[k] for k in data.files if k.startswith("input:")}
            outputs = {k.split(":", 1)[1]: data[k] for k in data.files if k.startswith("output:")}
        pairs.append((inputs, outputs))
    return pairs, json.loads((golden_dir / "tolerance.json").read_text())
