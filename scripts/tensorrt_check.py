"""TensorRT checks for an NVIDIA GPU machine, in one go: local engine builds (fp32, fp16), the deferred trtexec
command, and Torch-TensorRT, each replayed against PyTorch's golden outputs. Prints a table; exit 1 on failure.

Usage (on the GPU machine, in the project's virtualenv plus `pip install tensorrt` and optionally torch-tensorrt):
    python scripts/tensorrt_check.py [--models mlp,transformer_encoder] [--keep DIR]
"""
from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from examples.models.catalog import EXAMPLES  # noqa: E402
from tritonkit.export import ExportJob, export_model, onnx2trt  # noqa: E402
from tritonkit.export.progress import SilentProgress  # noqa: E402
from tritonkit.export.verify import differences  # noqa: E402
from tritonkit.golden import read_cases  # noqa: E402
from tritonkit.spec.export import ExportSpec, SourceSpec  # noqa: E402

TOLERANCE = {"fp32": {"atol": 5e-3, "rtol": 5e-3}, "fp16": {"atol": 5e-2, "rtol": 5e-2}}
Row = tuple[str, str, str, str, float, str]


def _export(root: Path, name: str, label: str, overrides: dict[str, Any]):
    spec = EXAMPLES[name]
    options = {**spec["export"], **overrides}
    job = ExportJob(f"{name}_{label}", SourceSpec.model_validate(spec["source"]), ExportSpec.model_validate(options),
                    spec["max_batch_size"], REPO_ROOT)
    return export_model(job, root / name / label / "1", root / name / label / "golden", root / "cache",
                        SilentProgress())


def local_build(root: Path, name: str, precision: str) -> tuple[str, str]:
    result = _export(root, name, f"local_{precision}", {"format": "tensorrt", "tolerance": TOLERANCE[precision],
                                                         "tensorrt": {"mode": "local", "fp16": precision == "fp16"}})
    worst = max(e["max_abs"] for e in result.tensorrt["max_errors"].values())
    return f"{worst:.3g}", f"{result.model_files[0].name}, profile max {result.tensorrt['profiles'][0]['max']}"


def deferred_trtexec(root: Path, name: str) -> tuple[str, str]:
    if shutil.which("trtexec") is None:
        raise LookupError("trtexec not on PATH")
    result = _export(root, name, "deferred", {"format": "tensorrt", "tolerance": TOLERANCE["fp32"],
                                              "tensorrt": {"mode": "deferred"}})
    version_dir = result.onnx_path.parent
    proc = subprocess.run(result.tensorrt["command"], cwd=version_dir, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"trtexec exit {proc.returncode}: {proc.stdout[-300:]}")
    worst = 0.0
    for case in read_cases(result.golden_files[0].parent):
        inputs, expected = case.steps[0]
        got = onnx2trt.run_engine(version_dir / "model.plan", inputs)
        for key, ref in expected.items():
            worst = max(worst, differences(got[key].astype(ref.dtype), ref)[0])
    if worst > TOLERANCE["fp32"]["atol"] * 10:
        raise AssertionError(f"engine from trtexec differs by {worst:.3g}")
    return f"{worst:.3g}", " ".join(result.tensorrt["command"][3:6])


def torch_tensorrt(root: Path, name: str) -> tuple[str, str]:
    if importlib.util.find_spec("torch_tensorrt") is None:
        raise LookupError("torch_tensorrt not installed")
    result = _export(root, name, "torch_trt", {"format": "torch_tensorrt", "tolerance": TOLERANCE["fp32"]})
    worst = max(e["max_abs"] for e in result.tensorrt["max_errors"].values())
    return f"{worst:.3g}", result.tensorrt["engine"]


CHECKS: dict[str, Callable[[Path, str], tuple[str, str]]] = {
    "local fp32": lambda root, name: local_build(root, name, "fp32"),
    "local fp16": lambda root, name: local_build(root, name, "fp16"),
    "deferred trtexec": deferred_trtexec,
    "torch-tensorrt": torch_tensorrt,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="mlp,transformer_encoder,tiny_gpt,ctc_acoustic,minilm")
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    import torch

    if not onnx2trt.tensorrt_available() or not torch.cuda.is_available():
        print("tensorrt_check: needs the tensorrt package and a CUDA GPU "
              f"(tensorrt: {onnx2trt.tensorrt_available()}, cuda: {torch.cuda.is_available()})")
        return 2
    import tensorrt

    print(f"TensorRT {tensorrt.__version__}, torch {torch.__version__}, GPU {torch.cuda.get_device_name(0)}")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tritonkit-trt-") as scratch:
        root = args.keep or Path(scratch)
        for name in [n for n in args.models.split(",") if n]:
            for check, run in CHECKS.items():
                started = time.perf_counter()
                try:
                    error, note = run(root, name)
                    status = "ok"
                except LookupError as exc:
                    error, note, status = "-", str(exc), "skip"
                except Exception as exc:  # report every failure in the table, keep going
                    error, status = "-", "FAIL"
                    note = (exc.line() if hasattr(exc, "line") else f"{type(exc).__name__}: {exc}")[:160]
                    traceback.print_exc(file=sys.stderr)
                rows.append((name, check, status, error, time.perf_counter() - started, note))
    print(f"{'model':<20}{'check':<18}{'status':<7}{'max abs':>10}{'s':>8}  note")
    for name, check, status, error, seconds, note in rows:
        print(f"{name:<20}{check:<18}{status:<7}{error:>10}{seconds:>8.1f}  {note}")
    failed = sum(r[2] == "FAIL" for r in rows)
    print(f"{sum(r[2] == 'ok' for r in rows)} passed, {failed} failed, {sum(r[2] == 'skip' for r in rows)} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
