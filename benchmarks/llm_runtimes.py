"""SmolLM2's decoder runtime on 2 CPU threads: onnxruntime (the engine's) against OpenVINO and llama.cpp.

Usage: python benchmarks/llm_runtimes.py [--rounds 7]
Example (~5 min once set up; the first time + a few minutes to install OpenVINO and build llama.cpp's
llama-batched-bench beside llama-server):
    nice -n 15 .venv/bin/python benchmarks/llm_runtimes.py --rounds 7 > llm_runtimes.txt

Two measures, each of a runtime alone (no serving, no sampling), the same weights and 2 threads on every side:
- The linear layers, the bulk of a decode step's work: every MatMulNBits of the example's int4 graph (the 120 int4
  projections of its 30 layers and the 8-bit tied head), with its own weights, run as one graph by onnxruntime
  (MatMulNBits, accuracy level 4: int8 activations, as the engine runs them) and by OpenVINO (the same blocks as
  int4/int8 weights decompressed into its FullyConnected, as NNCF writes them; its default dynamic int8
  activations), for 1, 2, 4, 8 and 16 rows a call: one row is a decode step at c=1; 8 rows, a step of 8 requests
  or one request verifying 7 drafted tokens. benchmarks/llm_runtime_kernels.py runs both in a virtualenv of their
  own (.tritonkit/peers/runtimes-venv); its rounds alternate the runtimes, medians of the rounds. OpenVINO cannot
  read the whole decoder graph: its ONNX reader takes com.microsoft GroupQueryAttention with up to 16 inputs, and
  the graph's attention passes each row's query length as the 17th (mixed prefill and decode rows in one call).
- Decoding: llama.cpp's llama-batched-bench (built from the llama.cpp of benchmarks/llm_peers.py's llama-server:
  Release, native CPU flags, ggml's thread pool) on the example's Q4_1 GGUF file, 1 and 8 sequences, a 32-token
  prompt each then 32 tokens (its S_TG: generated tokens over decode time), against the engine's decoder
  (OnnxDecoder, generate's settings) on the int4 graph built from that file doing the same: the rows' caches side
  by side in one slot store as the engine places them, prompts prefilled in one call, then 32 steps of every row
  feeding a fixed token, as llama-batched-bench does. Rounds alternate the two, each first in turn; medians.
  A runtime that decodes fewer tokens/s alone than the engine's decoder cannot serve more through the engine.

The table, then one JSON line: {"cpu", "amx" (the CPU exposes AMX: llama.cpp's Q4_1 kernels use it),
"openvino_over_ort_linear_s_rows1", "openvino_over_ort_linear_s_rows8" (time ratios: < 1 is OpenVINO faster),
"ort_linear_s_rows8_over_rows1", "openvino_linear_s_rows8_over_rows1" (what 8 rows cost over 1, the limit
speculative decoding meets), "linear_share_of_decode_step_c1" (onnxruntime's linear layers over a whole decode
step of the graph, one row after 32 positions, timed in the same rounds: the most any linear-layer kernel saves),
"llamacpp_over_ort_decode_tokens_s_c1", "llamacpp_over_ort_decode_tokens_s_c8", "linear_max_relative_diff" (the two
runtimes' layer outputs)}.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm import build_example  # noqa: E402
from llm_peers_setup import THREADS, llama_tool, log, runtimes_python  # noqa: E402
from report import cpu_model, print_report  # noqa: E402

ROWS = (1, 2, 4, 8, 16)
SEQUENCES = (1, 8)
PROMPT, TOKENS = 32, 32
KERNELS = Path(__file__).resolve().parent / "llm_runtime_kernels.py"


def cpu_flags() -> set[str]:
    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").is_file() else ""
    line = next((line for line in text.splitlines() if line.startswith("flags")), ":")
    return set(line.split(":", 1)[1].split())


def kernels(python: Path, graph: Path, rounds: int) -> dict[str, Any]:
    """benchmarks/llm_runtime_kernels.py's result for the graph's linear layers."""
    out = subprocess.run([str(python), str(KERNELS), str(graph), "--threads", str(THREADS),
                          "--rows", ",".join(map(str, ROWS)), "--rounds", str(rounds)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def llama_decode(binary: Path, gguf: Path) -> dict[int, float]:
    """llama-batched-bench's generated tokens/s for each of SEQUENCES."""
    context = max(SEQUENCES) * (PROMPT + TOKENS) + 64
    out = subprocess.run([str(binary), "-m", str(gguf), "-t", str(THREADS), "-tb", str(THREADS), "-c", str(context),
                          "-npp", str(PROMPT), "-ntg", str(TOKENS), "-npl", ",".join(map(str, SEQUENCES)),
                          "--output-format", "jsonl"], capture_output=True, text=True, check=True).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {line["pl"]: line["speed_tg"] for line in lines}


def engine_decode(decoder: Any, sequences: int) -> float:
    """The decoder's generated tokens/s for `sequences` rows decoding together (see the module)."""
    from tritonkit.pipelines.llm.runtime.decoder import Row
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCachePool

    positions = PROMPT + TOKENS + 1
    pool = KVCachePool(decoder.geometry, 1 << 40, slot_positions=positions, slots_per_store=max(SEQUENCES))
    caches = [pool.allocate(i, positions) for i in range(sequences)]
    prompt = np.arange(100, 100 + PROMPT, dtype=np.int64)
    decoder.step([Row(cache, prompt) for cache in caches])
    token = np.array([200], np.int64)
    started = time.perf_counter()
    for _ in range(TOKENS):
        decoder.step([Row(cache, token) for cache in caches])
    return sequences * TOKENS / (time.perf_counter() - started)


def decode_rounds(graph: Path, binary: Path, gguf: Path, rounds: int) -> dict[str, dict[int, float]]:
    """Median tokens/s of each side and sequence count over rounds that alternate the sides."""
    from tritonkit.pipelines.llm.runtime.decoder import OnnxDecoder

    decoder = OnnxDecoder(graph, intra_op_threads=THREADS, spin_duration_us=20)
    engine_decode(decoder, 1)  # warm-up
    sides = {"onnxruntime": lambda: {n: engine_decode(decoder, n) for n in SEQUENCES},
             "llama.cpp": lambda: llama_decode(binary, gguf)}
    runs: dict[str, list[dict[int, float]]] = {name: [] for name in sides}
    names = list(sides)
    for turn in range(rounds):
        for name in names[turn % 2:] + names[:turn % 2]:
            runs[name].append(sides[name]())
            log(f"round {turn + 1}/{rounds} {name}: " + ", ".join(f"{n} rows {v:.0f} tokens/s"
                                                                   for n, v in runs[name][-1].items()))
    return {name: {n: statistics.median(r[n] for r in by) for n in SEQUENCES} for name, by in runs.items()}


def main(argv: list[str] | None = None) -> int:
    from tritonkit.pipelines.llm.export.smollm2 import gguf_path

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="rounds (medians over them; each side first in turn)")
    args = parser.parse_args(argv)
    python, binary = runtimes_python(), llama_tool("llama-batched-bench")
    _, result = build_example("smollm2")
    graph = result.repository / "generate" / "1" / "model.onnx"
    log("timing the linear layers in onnxruntime and OpenVINO")
    linear = kernels(python, graph, args.rounds)
    decode = decode_rounds(graph, binary, gguf_path(), args.rounds)
    ort, ov = ({int(rows): seconds for rows, seconds in linear[name].items()} for name in ("ort", "openvino"))
    step_c1 = linear["decoder"]["1"]
    rows = [(f"linear layers, {n} row{'s' * (n > 1)} a call", f"{ort[n] * 1000:.2f} ms",
             f"OpenVINO {ov[n] * 1000:.2f} ms ({ov[n] / ort[n]:.2f}x)") for n in ROWS]
    rows += [(f"decode, {n} sequence{'s' * (n > 1)}", f"{decode['onnxruntime'][n]:.1f} tokens/s",
              f"llama.cpp {decode['llama.cpp'][n]:.1f} tokens/s "
              f"({decode['llama.cpp'][n] / decode['onnxruntime'][n]:.2f}x)") for n in SEQUENCES]
    rows.append(("machine", cpu_model(), f"AMX {'exposed' if 'amx_int8' in cpu_flags() else 'not exposed'}; "
                                          f"{THREADS} threads; {args.rounds} rounds"))
    print_report(rows, {
        "cpu": cpu_model(), "amx": "amx_int8" in cpu_flags(),
        "openvino_over_ort_linear_s_rows1": round(ov[1] / ort[1], 3),
        "openvino_over_ort_linear_s_rows8": round(ov[8] / ort[8], 3),
        "ort_linear_s_rows8_over_rows1": round(ort[8] / ort[1], 3),
        "openvino_linear_s_rows8_over_rows1": round(ov[8] / ov[1], 3),
        "linear_share_of_decode_step_c1": round(ort[1] / step_c1, 3),
        "llamacpp_over_ort_decode_tokens_s_c1": round(decode["llama.cpp"][1] / decode["onnxruntime"][1], 3),
        "llamacpp_over_ort_decode_tokens_s_c8": round(decode["llama.cpp"][8] / decode["onnxruntime"][8], 3),
        "linear_max_relative_diff": round(linear["max_relative_diff"], 4)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
