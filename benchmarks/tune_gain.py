"""What `tritonkit tune` gains on a model where batching matters, measured end to end in one run.

Writes a small project (a Python-backend model whose every call costs 20 ms plus 1 ms per item, spec'd
with max_batch_size 8 but no dynamic batching: the usual first config), runs `tritonkit tune` on it
(quick search, real Model Analyzer), then serves the default configuration and the tuned one on the
embedded Triton in turn and measures each with perf_analyzer at concurrency 8.

Prints both measurements and their ratio; the LAST line is the JSON object
{"tuned_over_default_throughput": x, "default_p99_ms": a, "tuned_p99_ms": b}.

    python benchmarks/tune_gain.py [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tritonkit.serve.perf import PerfOptions, run_perf
from tritonkit.serve.server import EmbeddedServer

CONCURRENCY = 8
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "batchy"  # spec + model where batching matters



def measure(repository: Path, work_dir: Path, label: str) -> dict[str, float]:
    """Serves `repository` and measures `batchy` at concurrency 8 with perf_analyzer (gRPC, count windows)."""
    with EmbeddedServer(repository, work_dir=work_dir) as server:
        result = run_perf(PerfOptions(model="batchy", url=server.grpc_url, concurrency=str(CONCURRENCY),
                                      measurement_request_count=300, stability_percentage=20.0, max_trials=10))
    row = result.rows[0]
    out = {"throughput": float(row["throughput_infer_per_sec"]), "p99_ms": row["p99_latency_us"] / 1000.0,
           "p50_ms": row["p50_latency_us"] / 1000.0}
    print(f"{label:>8}: {out['throughput']:8.1f} infer/s   p50 {out['p50_ms']:7.1f} ms   p99 {out['p99_ms']:7.1f} ms"
          f"   (perf_analyzer, concurrency {CONCURRENCY}, {repository})", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="Project directory to use and keep (default: a temporary one).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tune-gain-") as tmp:
        root = (args.keep or Path(tmp)).absolute()
        shutil.copytree(EXAMPLE, root, dirs_exist_ok=True)
        started = time.monotonic()
        tuned = subprocess.run([sys.executable, "-m", "tritonkit", "tune", "batchy", "--measurement-requests", "50",
                                "--json"], cwd=root, capture_output=True, text=True, check=False)
        if tuned.returncode != 0:
            sys.stderr.write(tuned.stderr)
            sys.exit(f"tritonkit tune failed with exit code {tuned.returncode}")
        summary = json.loads(tuned.stdout)
        winner = summary["winner"]
        print(f"tritonkit tune: {summary['measurements']} measurements in {time.monotonic() - started:.0f} s; winner "
              f"{winner['configuration']} ({winner['settings']}), Model Analyzer measured {winner['throughput_infer_per_s']:.1f}"
              f" infer/s at concurrency {winner['concurrency']}", flush=True)
        default = measure(root / ".tritonkit" / "tune" / "batchy" / "repository", root / ".tritonkit", "default")
        best = measure(root / "model_repository", root / ".tritonkit", "tuned")
        ratio = best["throughput"] / default["throughput"]
        print(f"tuned / default throughput at concurrency {CONCURRENCY}: {ratio:.2f}x; p99 {default['p99_ms']:.1f} ms -> "
              f"{best['p99_ms']:.1f} ms")
        print(json.dumps({"tuned_over_default_throughput": round(ratio, 3), "default_p99_ms": round(default["p99_ms"], 3),
                          "tuned_p99_ms": round(best["p99_ms"], 3)}))


if __name__ == "__main__":
    main()
