"""CLI start time: `tritonkit --version` and `tritonkit validate` on the example repository, next to `python -c pass`.

Usage: python benchmarks/cli_start.py [--runs 10] [--keep DIR]

The example project (the repository's tritonkit.yaml with the pipelines and models it uses) is copied into
a temporary folder and built there first, outside the timing. Then the three commands run in alternating
rounds (the machine is shared and noisy), each as a fresh process timed by wall clock from start to exit,
after one untimed warm-up round; each figure is the median of --runs. Prints a table; the LAST line is
{"version_s": a, "validate_s": b, "python_s": c}.
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

REPO_ROOT = Path(__file__).resolve().parents[1]
TRITONKIT = str(Path(sys.executable).with_name("tritonkit"))  # the console script a user runs


def build_example(root: Path) -> Path:
    """The example project built in `root`; returns its model repository."""
    shutil.copy(REPO_ROOT / "tritonkit.yaml", root)
    for folder in ("ensembles", "models", "examples"):
        shutil.copytree(REPO_ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__"),
                        dirs_exist_ok=True)
    subprocess.run([TRITONKIT, "build"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    return root / "model_repository"


def wall_time(command: list[str], cwd: Path) -> float:
    """Seconds from starting `command` to its exit; it must succeed."""
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, list[float]]:
    """`runs` timings per command, the order rotating each round so that none always runs first."""
    names = list(commands)
    for name in names:  # warm-up: bytecode caches and the page cache, not counted
        wall_time(commands[name], cwd)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(runs):
        for name in names[round_ % len(names):] + names[:round_ % len(names)]:
            times[name].append(wall_time(commands[name], cwd))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--keep", type=Path,
                        help="build the example here and keep it; a rerun reuses its export cache (default: a "
                             "temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tritonkit-cli-start-") as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        repository = build_example(root)
        models = sorted(p.name for p in repository.iterdir() if (p / "config.pbtxt").is_file())
        commands = {
            "python": [sys.executable, "-c", "pass"],
            "version": [TRITONKIT, "--version"],
            "validate": [TRITONKIT, "validate", repository.name],
        }
        load_before = os.getloadavg()[0]
        times = measure(commands, root, args.runs)
        load_after = os.getloadavg()[0]
    labels = {"python": "python -c pass", "version": "tritonkit --version",
              "validate": f"tritonkit validate ({len(models)} models)"}
    print(f"{'command':<34}{'median s':>10}{'min s':>8}{'max s':>8}")
    for name, label in labels.items():
        print(f"{label:<34}{statistics.median(times[name]):>10.3f}{min(times[name]):>8.3f}{max(times[name]):>8.3f}")
    print(f"{args.runs} runs each on {os.cpu_count()} cores; 1-minute load average {load_before:.2f} before, "
          f"{load_after:.2f} after")
    print(
        json.dumps(
            {f"{name}_s": round(statistics.median(times[name]), 3) for name in ("version", "validate", "python")}
        )
    )


if __name__ == "__main__":
    main()
