"""Measures one candidate of a joint pipeline search end to end: its configs written over the baseline repository,
served on the embedded Triton, perf_analyzer against the pipeline (k times, the median kept), server stopped.

The baseline's model files are linked, not copied, so a candidate costs a few config files; the server start (a
few seconds) is paid once per candidate and the k repeats share it.
"""
import shutil
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

from google.protobuf import text_format

from tritonkit.errors import TritonkitError
from tritonkit.serve.perf import PerfOptions, run_perf
from tritonkit.serve.server import EmbeddedServer
from tritonkit.triton.model_config import pb as mc


@dataclass(frozen=True)
class Bench:
    """How every candidate is measured: one concurrency, count windows, k repeats; perf_analyzer's input flags."""

    model: str
    concurrency: int = 4
    repeats: int = 1
    measurement_requests: int = 100
    stability_percentage: float = 25.0
    streaming: bool = False
    input_data: str | None = None
    shapes: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = field(default_factory=tuple)

    def perf_options(self, url: str) -> PerfOptions:
        extra = [*self.extra_args, *(["--streaming"] if self.streaming else [])]
        return PerfOptions(model=self.model, url=url, protocol="grpc", concurrency=str(self.concurrency),
                           shapes=list(self.shapes), input_data=self.input_data,
                           measurement_request_count=self.measurement_requests,
                           stability_percentage=self.stability_percentage, extra_args=extra)


@dataclass(frozen=True)
class Sample:
    """The median of a candidate's repeats (infer/s, p99 ms) and every repeat, for the summary."""

    throughput: float
    p99_ms: float
    repeats: tuple[tuple[float, float], ...]


def write_candidate(baseline: Path, out: Path, configs: dict[str, mc.ModelConfig]) -> Path:
    """`out`: the baseline repository's models linked file by file, with `configs` written as their config.pbtxt."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for model_dir in sorted(p for p in baseline.iterdir() if p.is_dir()):
        target = out / model_dir.name
        target.mkdir()
        for entry in model_dir.iterdir():
            if entry.name != "config.pbtxt" or model_dir.name not in configs:
                (target / entry.name).symlink_to(entry.resolve())
        if model_dir.name in configs:
            (target / "config.pbtxt").write_text(text_format.MessageToString(configs[model_dir.name]))
    return out


def _run(bench: Bench, url: str) -> list[dict[str, float | int]]:
    """One perf_analyzer run; when the machine is too noisy for its stability rule, a fixed count of requests."""
    opts = bench.perf_options(url)
    try:
        return run_perf(opts, timeout=600.0).rows
    except TritonkitError as exc:
        if "stable" not in str(exc):
            raise
    return run_perf(replace(opts, request_count=3 * bench.measurement_requests), timeout=600.0).rows


def measure(repository: Path, bench: Bench, work_dir: Path, log: Path) -> Sample:
    """Serves `repository` and measures the pipeline `bench.repeats` times; raises a one-line error on failure."""
    with EmbeddedServer(repository, work_dir=work_dir, log_path=log, startup_timeout=300.0) as server:
        points = []
        for _ in range(bench.repeats):
            rows = _run(bench, server.grpc_url)
            if not rows:
                raise TritonkitError("perf_analyzer", f"model '{bench.model}'", "no measurement row",
                                     "read the server log")
            row = rows[0]
            points.append((float(row["throughput_infer_per_sec"]), float(row["p99_latency_us"]) / 1000.0))
    return Sample(statistics.median(p[0] for p in points), statistics.median(p[1] for p in points), tuple(points))
