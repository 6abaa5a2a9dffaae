"""Where and how the tuned values were measured, so a reader of the spec can judge whether they still apply."""
import datetime as dt
import importlib.metadata
import os
import platform
import socket
from pathlib import Path

from tritonkit.serve.fallback import gpu_available
from tritonkit.spec.tuned import Provenance
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.results.measurements import Measurement


def cpu_description() -> str:
    """`Intel(R) Xeon(R) ... (2 cores)` from /proc/cpuinfo, else the platform's processor name."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        lines = []
    name = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("model name")), "")
    return f"{name or platform.processor() or platform.machine()} ({os.cpu_count() or 1} cores)"


def gpu_description() -> str | None:
    """The GPU names from the driver's /proc entries; None on a host without an NVIDIA GPU."""
    if not gpu_available():
        return None
    names = [line.split(":", 1)[1].strip() for info in sorted(Path("/proc/driver/nvidia/gpus").glob("*/information"))
             for line in info.read_text(errors="replace").splitlines() if line.startswith("Model:")]
    return ", ".join(names) or "NVIDIA GPU"


def model_analyzer_version() -> str | None:
    try:
        return importlib.metadata.version("triton-model-analyzer")
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(options: TuneOptions, best: Measurement) -> Provenance:
    return Provenance(
        date=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        host=socket.gethostname(),
        cpu=cpu_description(),
        gpu=gpu_description(),
        model_analyzer_version=model_analyzer_version(),
        objective=options.objective,
        constraints=options.constraints.as_dict(),
        throughput_infer_per_s=round(best.throughput, 2),
        p99_latency_ms=round(best.p99_ms, 3),
        concurrency=best.concurrency,
    )
