"""Export cache benchmark: `tritonkit build` of the example models cold (empty cache), then warm (nothing changed).

Usage: python benchmarks/export_cache.py [--models mlp,tiny_gpt,...] [--keep DIR]
Prints a table; the LAST line is the JSON object {"warm_over_cold": <warm build seconds / cold build seconds>}.
Both builds are the real CLI (`python -m tritonkit build --json`) on one spec, so the figure includes
everything a user waits for: spec loading, exports (or cache lookups), rendering, validation, writing.
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

import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from examples.models.catalog import EXAMPLES  # noqa: E402


def write_project(root: Path, names: list[str]) -> None:
    """A project with the example package and a spec that exports every chosen model."""
    shutil.copytree(REPO_ROOT / "examples", root / "examples", ignore=shutil.ignore_patterns("__pycache__"))
    models = {n: {"source": EXAMPLES[n]["source"], "export": EXAMPLES[n]["export"],
                  "max_batch_size": EXAMPLES[n]["max_batch_size"]} for n in names}
    (root / "tritonkit.yaml").write_text(yaml.safe_dump({"version": 1, "models": models}, sort_keys=False))


def timed_build(root: Path) -> tuple[float, dict]:
    """Wall seconds of one `tritonkit build --json`, and its summary."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "tritonkit", "build", "--json"], cwd=root, capture_output=True,
                            text=True)
    elapsed = time.perf_counter() - started
    if result.returncode:
        sys.exit(f"build failed: {result.stderr.strip().splitlines()[-1]}")
    return elapsed, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(EXAMPLES), help="comma-separated example names")
    parser.add_argument("--keep", type=Path, help="build here and keep the project (default: a temporary folder)")
    args = parser.parse_args()
    names = [n for n in args.models.split(",") if n]
    root = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-export-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    write_project(root, names)
    cold_s, cold = timed_build(root)
    warm_s, warm = timed_build(root)
    print(f"{'model':<22}{'cold export s':>14}{'warm export s':>14}  warm cache")
    for name in names:
        c, w = cold["exports"][name], warm["exports"][name]
        print(f"{name:<22}{c['seconds']:>14.2f}{w['seconds']:>14.2f}  {'hit' if w['cache_hit'] else 'MISS'}")
    print(f"{'tritonkit build':<22}{cold_s:>14.2f}{warm_s:>14.2f}")
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"warm_over_cold": round(warm_s / cold_s, 4)}))


if __name__ == "__main__":
    main()
