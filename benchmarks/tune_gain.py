"""What `tritonkit tune` gains on a model that computes, and how its quick search compares with a full grid.

Usage: python benchmarks/tune_gain.py [--rounds 3] [--measurement-requests 50] [--keep DIR]

One run, on this machine:
  1. writes a MiniLM-L6 encoder project (ONNX, sequence length 128, max_batch_size 16, 1 CPU instance, no
     dynamic batching: the usual first config) and runs `tritonkit tune minilm` on it (quick search, real
     Model Analyzer on the embedded Triton), which writes the winner back and rebuilds;
  2. brute-force grid over exactly tune's search space (tritonkit.tune.analyzer.space: the default configuration plus
     every instance count x max batch size quick search may pick, with its queue delay, at every concurrency
     of its range), each point measured once with perf_analyzer (fixed request count);
  3. alternating rounds at concurrency 8 of the default configuration, the tuned one (the rebuilt repository)
     and the grid's best; figures are medians over rounds (the machine is shared and noisy).
All configurations are loaded in one embedded server; every one gets the same onnxruntime threads in all
(cores split over its instances by the fallback runner). Prints tables; the LAST line is the JSON object
{"tuned_over_default_throughput", "tuned_over_grid_best", "measurements_tune", "measurements_grid",
 "default_p99_ms", "tuned_p99_ms"}.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from google.protobuf import text_format
from serve_overhead import REPO_ROOT, SEQ_LEN, perf, perf_input_file
from tritonclient.grpc import model_config_pb2 as pb

from tritonkit.pipelines import registry
from tritonkit.serve.fallback import gpu_available
from tritonkit.serve.server import EmbeddedServer
from tritonkit.spec.loader import load_project
from tritonkit.tune.analyzer.space import concurrency_range, model_space, powers_of_two

registry.install()
CONCURRENCY = 8
SPEC = f"""version: 1
models:
  minilm:
    source: {{python: examples.models.minilm:build, kwargs: {{seq_len: {SEQ_LEN}}}}}
    export: {{dynamic_axes: {{input_ids: {{1: seq}}, attention_mask: {{1: seq}}}},
              verify: {{lengths: {{seq: [16]}}, golden_samples: 1}}}}
    max_batch_size: 16
    instance_group: [{{kind: KIND_CPU, count: 1}}]
"""
Config = tuple[int, int, int | None]  # (instances, max batch size, queue delay us or None: no dynamic batching)


def write_project(root: Path) -> Path:
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    (root / "tritonkit.yaml").write_text(SPEC)
    return root / "tritonkit.yaml"


def run_tune(root: Path, measurement_requests: int) -> dict:
    """`tritonkit tune minilm --json` as a user runs it; its summary."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tritonkit", "tune", "minilm", "--measurement-requests",
                           str(measurement_requests), "--json"], cwd=root, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        sys.exit(f"tritonkit tune failed with exit code {done.returncode}")
    summary = json.loads(done.stdout)
    summary["wall_s"] = time.monotonic() - started
    return summary


def earlier_tune(root: Path) -> dict:
    """The summary of a tune run already in `root` (--reuse-tune: measure again without searching again)."""
    path = root / ".tritonkit" / "tune" / "minilm" / "summary.json"
    if not path.is_file():
        sys.exit(f"--reuse-tune: no {path}; run once without it")
    summary = json.loads(path.read_text())
    summary["wall_s"] = summary["elapsed_s"]
    return summary


def grid_space(root: Path) -> tuple[list[Config], list[int]]:
    """Tune's own quick-search space for the untuned spec (same functions, same host facts): configs and
    concurrencies. Read from a copy of SPEC: the project's spec carries the tuned overlay once tune has run."""
    untuned = root / ".tune-gain-untuned.yaml"
    untuned.write_text(SPEC)
    spec = load_project(untuned).models["minilm"]
    untuned.unlink()
    space = model_space("minilm", spec, "quick", gpu_available(), None, None)
    low, high = concurrency_range([space])
    configs: list[Config] = [(1, spec.max_batch_size, None)]  # Model Analyzer's default configuration
    configs += [(i, b, d) for i in space.instance_counts for b in space.max_batch_sizes for d in space.delays_us]
    return configs, list(powers_of_two(low, high))


def config_of(path: Path) -> pb.ModelConfig:
    return text_format.Parse(path.read_text(), pb.ModelConfig())


def settings(config: pb.ModelConfig) -> Config:
    count = sum(max(g.count, 1) for g in config.instance_group) or 1
    delay = config.dynamic_batching.max_queue_delay_microseconds if config.HasField("dynamic_batching") else None
    return count, config.max_batch_size, delay


def name_of(config: Config) -> str:
    instances, batch, delay = config
    return f"grid_i{instances}_b{batch}_" + ("nodyn" if delay is None else f"d{delay}")


def add_model(repository: Path, source: Path, name: str, config: pb.ModelConfig) -> None:
    """A copy of a built model folder (files hard-linked) under another name with another config."""
    shutil.copytree(source, repository / name, copy_function=os.link)
    new = pb.ModelConfig()
    new.CopyFrom(config)
    new.name = name
    (repository / name / "config.pbtxt").unlink()  # a hard link to the built file: write a new one
    (repository / name / "config.pbtxt").write_text(text_format.MessageToString(new))


def variant(base: pb.ModelConfig, config: Config) -> pb.ModelConfig:
    """The built config with a grid point's instance count, max batch size and dynamic batching."""
    instances, batch, delay = config
    new = pb.ModelConfig()
    new.CopyFrom(base)
    new.max_batch_size = batch
    new.instance_group[0].count = instances
    new.ClearField("dynamic_batching")
    if delay is not None:
        new.dynamic_batching.SetInParent()
        new.dynamic_batching.max_queue_delay_microseconds = delay
    return new


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     epilog="example: python benchmarks/tune_gain.py --rounds 3 --keep /tmp/tune-gain")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds at concurrency 8; figures are medians")
    parser.add_argument("--measurement-requests", type=int, default=100,
                        help="tune's perf_analyzer count window (its default)")
    parser.add_argument("--keep", type=Path, help="project folder to use and keep (default: a temporary one)")
    parser.add_argument("--reuse-tune", action="store_true", help="with --keep: take the tune run already there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tune-gain-") as tmp:
        root = (args.keep or Path(tmp)).absolute()
        root.mkdir(parents=True, exist_ok=True)
        if args.reuse_tune and args.keep:
            tuned = earlier_tune(root)
        else:
            write_project(root)
            tuned = run_tune(root, args.measurement_requests)
        winner = tuned["winner"]
        print(f"tritonkit tune: {tuned['measurements']} measurements of {tuned['configurations']} configurations in "
              f"{tuned['wall_s']:.0f} s; winner {winner['configuration']} ({winner['settings']})",
              flush=True)

        configs, levels = grid_space(root)
        default_dir = root / ".tritonkit" / "tune" / "minilm" / "repository" / "minilm"
        tuned_dir = root / "model_repository" / "minilm"
        repository = root / "bench_repository"
        shutil.rmtree(repository, ignore_errors=True)
        repository.mkdir()
        base = config_of(default_dir / "config.pbtxt")
        add_model(repository, default_dir, "default", base)
        add_model(repository, tuned_dir, "tuned", config_of(tuned_dir / "config.pbtxt"))
        for config in configs:
            add_model(repository, default_dir, name_of(config), variant(base, config))
        tuned_settings = settings(config_of(tuned_dir / "config.pbtxt"))
        input_data = perf_input_file(root / "input_data.json")

        grid: dict[Config, dict[int, dict[str, float]]] = {}
        rounds: dict[str, list[dict[str, float]]] = {}
        with EmbeddedServer(repository, work_dir=root / ".tritonkit", startup_timeout=900) as server:
            url = server.grpc_url
            started = time.monotonic()
            for config in configs:
                perf(url, name_of(config), input_data, 1, window=4)  # first calls load pages
                grid[config] = {c: perf(url, name_of(config), input_data, c, window=max(32, 2 * c)) for c in levels}
                peak = max(grid[config].values(), key=lambda r: r["throughput"])
                print(f"grid {name_of(config):<22} peak {peak['throughput']:6.1f} infer/s", file=sys.stderr, flush=True)
            grid_s = time.monotonic() - started
            peaks = {config: max(r["throughput"] for r in by_level.values()) for config, by_level in grid.items()}
            best = max(peaks, key=peaks.__getitem__)
            sides = ["default", "tuned", name_of(best)]
            for model in sides:
                perf(url, model, input_data, CONCURRENCY, window=16)  # warm-up
            for round_ in range(args.rounds):
                for model in sides[round_ % 3:] + sides[:round_ % 3]:
                    rounds.setdefault(model, []).append(perf(url, model, input_data, CONCURRENCY, window=100))

        med = {m: {k: statistics.median(r[k] for r in results) for k in ("throughput", "p99_ms")}
               for m, results in rounds.items()}
        spread = {m: (min(r["throughput"] for r in results), max(r["throughput"] for r in results))
                  for m, results in rounds.items()}
        measurements_grid = len(configs) * len(levels)
        print(f"\nGrid over tune's space: {len(configs)} configurations x concurrency {levels} = {measurements_grid} "
              f"perf_analyzer measurements in {grid_s:.0f} s ({os.cpu_count()} cores; every configuration "
              f"{os.cpu_count()} onnxruntime threads in all)")
        print(f"{'configuration (instances, max batch, queue delay)':<52}{'peak infer/s':>13}{'at c':>6}{'c=8':>8}")
        for config in sorted(configs, key=peaks.__getitem__, reverse=True):
            at = max(grid[config], key=lambda c: grid[config][c]["throughput"])
            mark = (" <- tuned" if config == tuned_settings else "") + (" <- grid best" if config == best else "")
            print(f"{name_of(config):<52}{peaks[config]:>13.1f}{at:>6}{grid[config][CONCURRENCY]['throughput']:>8.1f}{mark}")
        print(f"\nMiniLM-L6 ONNX seq {SEQ_LEN}, perf_analyzer gRPC at concurrency {CONCURRENCY}, median of "
              f"{args.rounds} "
              "alternating rounds (count windows of 100 requests)")
        labels = {"default": "default (1 instance, no dynamic batching)", "tuned": f"tuned ({winner['settings']})",
                  name_of(best): f"grid best ({name_of(best)})"}
        print(f"{'configuration':<60}{'infer/s':>9}{'min-max':>13}{'p99 ms':>9}")
        for model in sides:
            low, high = spread[model]
            print(f"{labels[model]:<60}{med[model]['throughput']:>9.1f}{f'{low:.0f}-{high:.0f}':>13}{med[model]['p99_ms']:>9.1f}")
        in_grid = peaks.get(tuned_settings)
        print(f"tuned / grid best in the grid sweep itself (peak over concurrencies): "
              f"{in_grid / peaks[best]:.3f}" if in_grid else "tuned configuration is outside the grid")
        print(json.dumps({
            "tuned_over_default_throughput": round(med["tuned"]["throughput"] / med["default"]["throughput"], 3),
            "tuned_over_grid_best": round(med["tuned"]["throughput"] / med[name_of(best)]["throughput"], 3),
            "measurements_tune": tuned["measurements"], "measurements_grid": measurements_grid,
            "default_p99_ms": round(med["default"]["p99_ms"], 1), "tuned_p99_ms": round(med["tuned"]["p99_ms"], 1)}))


if __name__ == "__main__":
    main()
