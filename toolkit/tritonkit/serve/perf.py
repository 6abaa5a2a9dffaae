"""Runs Triton's `perf_analyzer` (from tritonclient 2.51) against a server and reads its CSV as numbers.

perf_analyzer links `libb64.so.0d` and `libcudart.so.12`; the prepared runtime provides both, so the
same environment as the embedded server is used. Defaults suit a noisy CPU machine: count windows of
100 requests and a 20% stability band instead of perf_analyzer's 10%.
"""
import csv
import io
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.serve.ports import no_server
from tritonkit.serve.runtime import perf_analyzer_path, prepare_runtime

_RANGE = re.compile(r"^\d+(:\d+(:\d+)?)?$")


@dataclass
class PerfOptions:
    """What to measure and how; field names follow perf_analyzer's flags."""

    model: str
    url: str = "127.0.0.1:8001"
    protocol: str = "grpc"
    concurrency: str = "1:4:1"
    batch_size: int = 1
    shapes: list[str] = field(default_factory=list)
    input_data: str | None = None
    measurement_request_count: int = 100
    stability_percentage: float = 20.0
    max_trials: int = 10
    request_count: int | None = None
    extra_args: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PerfResult:
    """One row per concurrency level, keys in snake_case (latencies in microseconds)."""

    command: list[str]
    rows: list[dict[str, float | int]]
    csv_text: str


def command(opts: PerfOptions, csv_path: Path) -> list[str]:
    """The perf_analyzer command line for `opts`, writing its report to `csv_path`."""
    if not _RANGE.match(opts.concurrency):
        raise TritonkitError("", "--concurrency", f"'{opts.concurrency}' is not a concurrency range",
                             "use START[:END[:STEP]], e.g. 1:8:1 or 4")
    cmd = [str(perf_analyzer_path()), "-m", opts.model, "-u", opts.url, "-i", opts.protocol,
           "--concurrency-range", opts.concurrency, "-b", str(opts.batch_size),
           "--measurement-mode", "count_windows",
           "--measurement-request-count", str(opts.measurement_request_count),
           "-s", str(opts.stability_percentage), "-r", str(opts.max_trials), "-f", str(csv_path)]
    if opts.request_count:
        cmd += ["--request-count", str(opts.request_count)]
    for shape in opts.shapes:
        cmd += ["--shape", shape]
    if opts.input_data:
        cmd += ["--input-data", opts.input_data]
    return cmd + list(opts.extra_args)


def _key(header: str) -> str:
    snake = re.sub(r"[^a-z0-9]+", "_", header.strip().lower()).strip("_")
    if snake == "inferences_second":
        return "throughput_infer_per_sec"
    if snake in ("concurrency", "request_rate") or "gpu" in snake:
        return snake
    return snake + "_us"


def parse_csv(text: str) -> list[dict[str, float | int]]:
    """perf_analyzer's latency report as dicts of numbers; empty (GPU) columns are dropped.

    perf_analyzer writes its rows sorted by throughput, so a level that measured slower than the one
    below it comes first; the rows are put back in load order (concurrency or request rate).
    """
    rows = []
    for raw in csv.DictReader(io.StringIO(text)):
        row: dict[str, float | int] = {}
        for header, value in raw.items():
            if header is None or value in (None, ""):
                continue
            number = float(value)
            row[_key(header)] = int(number) if number.is_integer() and "throughput" not in _key(header) else number
        rows.append(row)
    return sorted(rows, key=lambda row: row.get("concurrency", row.get("request_rate", 0)))


_NO_SERVER = ("failed to connect", "couldn't connect", "connection refused")


def _first_error(lines: list[str]) -> str:
    """The line that says what went wrong: an error line, else the getopt message above a usage block
    (its last line, e.g. "... while modelB's version is unspecified", says nothing), else the last line."""
    usage = next((i for i, ln in enumerate(lines) if ln.startswith("Usage:")), None)
    said = lines if usage is None else lines[:usage]
    first = next((ln for ln in said if ln.lower().startswith(("error", "failed"))), said[-1] if said else "")
    return first.rpartition("perf_analyzer: ")[2] if usage is not None else first


def _failure(opts: PerfOptions, output: str) -> TritonkitError:
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    first = _first_error(lines).replace(";", ",")   # one '; ' only, between problem and fix
    if any(word in first.lower() for word in _NO_SERVER):
        return no_server("--url", opts.url, opts.protocol)
    if "stable" in first:
        fix = "raise --stability-percentage or --measurement-request-count, or fix the count with --request-count"
    elif "unavailable" in first.lower():
        fix = f"wait until the server is ready (tritonkit serve --background), or point --url at one (now {opts.url})"
    elif any(ln.startswith("Usage:") for ln in lines):
        fix = "check the arguments after -- (perf_analyzer --help lists them)"
    else:
        fix = "check the model name, its input shapes (--shape NAME:DIMS) and the server log"
    return TritonkitError("perf_analyzer", f"model '{opts.model}'", first or "perf_analyzer failed", fix)


def run_perf(opts: PerfOptions, csv_out: Path | None = None, timeout: float = 900.0) -> PerfResult:
    """Runs perf_analyzer to completion; raises a one-line error with its own message when it fails."""
    env = prepare_runtime().env
    with tempfile.TemporaryDirectory(prefix="tritonkit-perf-") as tmp:
        csv_path = csv_out or Path(tmp) / "perf.csv"
        cmd = command(opts, csv_path)
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TritonkitError("perf_analyzer", f"model '{opts.model}'", f"no result within {timeout:.0f} s",
                                 "measure fewer concurrency levels or use --request-count") from None
        if proc.returncode != 0 or not csv_path.is_file():
            raise _failure(opts, proc.stdout + "\n" + proc.stderr)
        text = csv_path.read_text()
    return PerfResult(command=cmd, rows=parse_csv(text), csv_text=text)
