"""What the weights' format costs a SmolLM2 decode step: int8, int4 carried over exactly from the GGUF's Q4_1
blocks, and int4 re-quantized onto another grid, in process.

Usage: python benchmarks/llm_weights.py [--rounds 7] [--steps 32]

The example project (examples/llm/smollm2) is built with `quantize: none` under .tritonkit/bench/llm_weights/ (the
float graph the build verifies; cached), then quantized as `tritonkit build` does (export/onnx2nbits.py: blocks of
32, embedding and tied head int8) three ways. Each graph runs in one onnxruntime session with generate's settings
(2 intra-op threads, idle threads spinning 20 us): a 20-token prompt, then --steps greedy decode steps, each step
timed; rounds alternate the graphs (each first in turn), medians of the rounds' median step. Quality is the build's
(`tritonkit build --json`: exports.generate.quantized.lm), not measured here.
The last line is {"int8_step_ms", "int4_exact_step_ms", "int4_regrid_step_ms", "int4_exact_over_int8_step",
"int8_mib", "int4_exact_mib", "int4_regrid_mib"}.
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

FOLDER = REPO_ROOT / ".tritonkit" / "bench" / "llm_weights"
#: name -> (bits, carry 4-bit blocks over exactly)
WAYS = {"int8": (8, True), "int4_exact": (4, True), "int4_regrid": (4, False)}


def float_graph() -> Path:
    """The example's decoder built without quantization (the export cache makes a rebuild quick)."""
    from examples.llm.project import RECIPES, write_project
    from tritonkit.export.progress import StderrProgress
    from tritonkit.pipelines.llm.export.prepare import write_assets
    from tritonkit.repository.build import build

    export = copy.deepcopy(yaml.safe_load(RECIPES["smollm2"][0].read_text())["models"]["generate"]["export"])
    export["quantize"] = "none"
    folder = FOLDER / "float"
    spec = write_project(folder, "smollm2", write_assets("smollm2", folder / "prepared_assets"),
                         generate_overrides={"export": export})
    return build(spec, progress=StderrProgress()).repository / "generate" / "1" / "model.onnx"


def decoder(path: Path):
    """The engine's decoder with generate's settings (2 intra-op threads here, idle threads spinning 20 us)."""
    from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder

    return OnnxDecoder(path, spin_duration_us=20)


def step_seconds(decoder, steps: int) -> float:
    """Median time of one greedy decode step after a 20-token prompt."""
    prompt = 20
    g = decoder.geometry
    key = value = np.zeros((1, g.layers, g.kv_heads, 0, g.head_dim), np.float32)
    logits, new_key, new_value = decoder.run(np.arange(100, 100 + prompt, dtype=np.int64)[None], key, value,
                                             np.zeros((1, 1), np.int64), np.array([[prompt]], np.int64))
    times = []
    for t in range(steps):
        # the graph returns the new entries only (kv_graph): the caller keeps the cache
        key, value = np.concatenate([key, new_key], 3), np.concatenate([value, new_value], 3)
        started = time.perf_counter()
        logits, new_key, new_value = decoder.run(np.array([[int(logits.argmax())]], np.int64), key, value,
                                                 np.array([[prompt + t]], np.int64), np.array([[1]], np.int64))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.report import print_report
    from tritonkit.export.onnx2nbits import quantize_graph

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=32)
    args = parser.parse_args(argv)
    source = float_graph()
    paths, counts = {}, {}
    for name, (bits, exact) in WAYS.items():
        paths[name] = FOLDER / f"{name}.onnx"
        counts[name] = quantize_graph(source, paths[name], bits, 32, True, 8, exact_4bit=exact)
    decoders = {name: decoder(path) for name, path in paths.items()}
    for d in decoders.values():   # warm-up
        step_seconds(d, 4)
    runs: dict[str, list[float]] = {name: [] for name in WAYS}
    names = list(WAYS)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            runs[name].append(step_seconds(decoders[name], args.steps))
    ms = {name: statistics.median(v) * 1000 for name, v in runs.items()}
    mib = {name: path.stat().st_size / 2**20 for name, path in paths.items()}
    rows = [(f"{name} decode step", f"{ms[name]:.2f} ms",
             f"{mib[name]:.0f} MiB; {counts[name].exact_4bit} of {counts[name].matmuls} MatMuls exact 4-bit; rounds: "
             f"{', '.join(f'{v * 1000:.2f}' for v in runs[name])}") for name in WAYS]
    print_report(rows, {"int8_step_ms": round(ms["int8"], 2), "int4_exact_step_ms": round(ms["int4_exact"], 2),
                        "int4_regrid_step_ms": round(ms["int4_regrid"], 2),
                        "int4_exact_over_int8_step": round(ms["int4_exact"] / ms["int8"], 3),
                        "int8_mib": round(mib["int8"]), "int4_exact_mib": round(mib["int4_exact"]),
                        "int4_regrid_mib": round(mib["int4_regrid"])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
