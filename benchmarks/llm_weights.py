"""What the weights' format costs a SmolLM2 decode step, and what it keeps of the model: int8, int4 keeping the
GGUF's Q4_1 levels, that with the tied LM head at int4 and its top 64 logits rescored from the 8-bit embedding (the
example's), int4 re-quantized onto another grid, and that with the tied LM head at int4 too (onnxruntime-genai's
int4 choices: its model builder re-quantizes every MatMul, the head included), in process.

Usage: python benchmarks/llm_weights.py [--rounds 7] [--steps 32]

The example project (examples/llm/smollm2) is built with `quantize: none` under .tritonkit/bench/llm_weights/ (the
float graph the build verifies; cached), then quantized as `tritonkit build` does (export/onnx2nbits.py: blocks of
32, embedding and tied head int8) five ways. Each graph runs in the engine's decoder with generate's settings
(2 intra-op threads, idle threads spinning 20 us): a 20-token prompt, then --steps greedy decode steps, each step
timed; rounds alternate the graphs (each first in turn), medians of the rounds' median step. Each way's quality is
measured as the build measures it (export/quality.py: greedy agreement with the float graph, teacher forced, and
perplexity over the float graph's), against the bounds of the example's spec (>= 0.9, <= 1.05): the
carry-over's block sums (appended to x for the remainders of the blocks' offsets) cost steps beside the re-grid,
and the re-grid costs what those bounds allow.
The last line is {"<way>_step_ms", "<way>_mib", "<way>_greedy_agreement", "<way>_perplexity_ratio"} for each way
and "int4_exact_over_int8_step", "int4_exact_over_regrid_head4_step" and the same two of "int4_exact_rescored".
"""
from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tritonkit.pipelines import registry  # noqa: E402

registry.install()

FOLDER = REPO_ROOT / ".tritonkit" / "bench" / "llm_weights"
#: name -> (bits, carry 4-bit blocks over exactly, the tied head's bits, its top logits rescored from the 8-bit
#: embedding: head_rescore_top_k)
WAYS = {"int8": (8, True, 8, 0), "int4_exact": (4, True, 8, 0), "int4_exact_rescored": (4, True, 8, 64),
        "int4_regrid": (4, False, 8, 0), "int4_regrid_head4": (4, False, 4, 0)}


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


def quantized(source: Path, way: str, target: Path, always_external: bool = False) -> Any:
    """`source` (the float graph) quantized `way` (a WAYS name) into `target`; the quantizer's counts."""
    from tritonkit.export.onnx2nbits import quantize_graph

    bits, exact, head_bits, rescore = WAYS[way]
    return quantize_graph(source, target, bits, 32, True, 8, always_external=always_external, exact_4bit=exact,
                          head_bits=head_bits, head_rescore_top_k=rescore)


def peer_weights_repository(repository: Path, target: Path) -> Path:
    """A copy of the built repository (hard links) whose generate runs onnxruntime-genai's int4 choices
    (int4_regrid_head4: every MatMul re-quantized, the tied head at int4), every config and file else as built."""
    from llm import edited_repository

    edited_repository(repository, target, lambda name, config: False)
    model = target / "generate" / "1" / "model.onnx"
    for path in (model, model.with_name("model.onnx.data")):
        path.unlink(missing_ok=True)  # hard links to the built graph: new files
    quantized(float_graph(), "int4_regrid_head4", model, always_external=True)
    return target


def decoder(path: Path):
    """The engine's decoder with generate's settings (2 intra-op threads here, idle threads spinning 20 us)."""
    from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder

    return OnnxDecoder(path, spin_duration_us=20)


def step_seconds(decoder, steps: int) -> float:
    """Median time of one greedy decode step after a 20-token prompt."""
    from tritonkit.pipelines.llm.runtime.decoder import Row
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCache

    prompt = 20
    cache = KVCache.empty(decoder.geometry, prompt + steps)
    logits = decoder.step([Row(cache, np.arange(100, 100 + prompt, dtype=np.int64))])
    times = []
    for _ in range(steps):
        started = time.perf_counter()
        logits = decoder.step([Row(cache, np.array([int(logits.argmax())], np.int64))])
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    from benchmarks.report import print_report
    from tritonkit.pipelines.llm.export.quality import Reference

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=32)
    args = parser.parse_args(argv)
    source = float_graph()
    paths, counts = {}, {}
    for name in WAYS:
        paths[name] = FOLDER / f"{name}.onnx"
        counts[name] = quantized(source, name, paths[name])
    print("measuring each way's greedy agreement and perplexity against the float graph", file=sys.stderr)
    reference = Reference(source, source.with_name("tokenizer.json"))
    quality = {name: reference.against(path) for name, path in paths.items()}
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
    agreement = {name: q["greedy_agreement_quantized_vs_float"] for name, q in quality.items()}
    ratio = {name: q["perplexity_quantized_over_float"] for name, q in quality.items()}
    rows = [(f"{name} decode step", f"{ms[name]:.2f} ms",
             f"{mib[name]:.0f} MiB; {counts[name].exact_4bit} of {counts[name].matmuls} MatMuls' Q4_1 levels kept; "
             f"greedy agreement {agreement[name]:.3f}, perplexity x{ratio[name]:.3f}; rounds: "
             f"{', '.join(f'{v * 1000:.2f}' for v in runs[name])}") for name in WAYS]
    summary = {f"{name}_step_ms": round(ms[name], 2) for name in WAYS}
    summary |= {f"{way}_over_{base.removeprefix('int4_')}_step": round(ms[way] / ms[base], 3)
                for way in ("int4_exact", "int4_exact_rescored") for base in ("int8", "int4_regrid_head4")}
    summary |= {f"{name}_mib": round(mib[name]) for name in WAYS}
    for name in WAYS:
        summary |= {f"{name}_greedy_agreement": agreement[name], f"{name}_perplexity_ratio": ratio[name]}
    print_report(rows, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
