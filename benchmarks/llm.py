"""LLM pipeline benchmark: in-flight batching vs one request at a time vs in-process onnxruntime loops.

Usage: python benchmarks/llm.py [--models tiny,smollm2] [--concurrency 1,4,8] [--parts all|throughput|long]
                                [--chunks 16,32] [--rounds 3]

For each model, the example project (examples/llm/<model>/) is built once (the decoder export is cached under
.tritonkit/bench/llm/) and served twice on the embedded Triton: as specified (in-flight batching, up to 16
generations per step) and with generate's max_batch_size set to 1 (the same model, one request per step).
Clients stream from the `llm` ensemble over gRPC, text in, `max_tokens` tokens out (ignore_eos, greedy),
`c` requests at once. Two in-process baselines run the same model.onnx with generate's own session settings
(threads, spinning) and no server: `c` plain greedy loops in threads on one session (batch 1 each), and the
batched engine the served `generate` model runs (tritonkit.pipelines.llm.runtime), driven directly: all `c`
requests admitted at once and stepped together with the same KV-cache decoder (the real limit for c > 1).
Reported: mean time to first token (TTFT), mean gap between tokens (ITL), and output tokens per second over
the whole run.

Long prompt (`--parts long` runs only this; a fresh server of its own, streaming prompt ids from `generate`):
a 1,500-token prompt (fewer when the model's context is shorter) alone, its TTFT and whether it completes; then
7 short streams decoding, alone and with the same long prompt arriving once each has 10 tokens: the short
streams' p99 gap between tokens while the long prompt prefills (its send to its first token) over their p99 gap
without it (the two measured back to back; the median over `--rounds`). `--chunks 16,32` serves one copy of the
repository per prefill_chunk_tokens value side by side and alternates the rounds between them (ABBA order), so
a shared machine's load falls on each alike; without it, the spec's value. Then the server's memory after the
rounds, with only the first (or the spec's) server up: proportional set size (PSS) summed over tritonserver and
every Python-backend stub, per process, after loading and after the long prompts, next to the weights' size and
the stubs' baseline: the same repository served with generate's model.onnx swapped for the tiny GPT's (0.2 MB of
weights; the same stubs, libraries, tokenizers and engine code), after one short request. The target:
at most 1.3 x the weights + that baseline (`memory_aim_mib`).

Prints a table; the LAST line is the JSON object for the last model run, keys named after the lowest (lo) and
highest (hi) concurrency measured: {"inflight_over_sequential_c<hi>", "inflight_over_inprocess_batched_c<hi>",
"served_over_inprocess_c<lo>", "ttft_ms_c<lo>", "itl_ms_c<lo>", "long_prompt_completes", "long_prompt_ttft_ms",
"itl_p99_during_long_prefill_over_without", "server_memory_mib", "weights_mib", "stubs_baseline_mib",
"memory_aim_mib", "prefill_chunk_tokens"} (only the long-prompt keys with `--parts long`; without `--chunks`
or with one value, also "server_memory_loaded_mib"; with several `--chunks`, the long-prompt keys are the first
value's, and "itl_p99_ratio_by_chunk"/"long_prompt_ttft_ms_by_chunk" give each value's).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tritonkit.pipelines import registry  # noqa: E402
from tritonkit.pipelines.llm.tune.stream import PROMPTS, Run, clients_run, stream_arrivals, text_run  # noqa: E402, F401

registry.install()

TOKENS = {"tiny": 64, "smollm2": 32}
LONG_PROMPT_TOKENS, SHORT_STREAMS, SHORT_WARM_TOKENS = 1500, 7, 10
LONG_TEXT = "The river rises in the hills, runs through the old town and the fields, and reaches the sea at last. "
#: Result keys and the row labels the table prints for them.
SETUPS = {"in-flight": "served: in-flight batching", "one-at-a-time": "served: one request per step",
          "in-process": "in-process: c threads, batch 1 each", "in-process batched": "in-process: batched engine"}


def served_run(url: str, prompts: list[str], max_tokens: int, extra: dict | None = None) -> Run:
    """len(prompts) concurrent gRPC streams to the `llm` ensemble (`extra`: more inputs, e.g. a system prompt)."""
    return text_run(url, "llm", prompts, max_tokens, "output_ids", extra)


def generate_metrics(metrics_url: str) -> dict[str, float]:
    """generate's llm_* gauges and counters from Triton's /metrics (generate publishes them every cancel_poll_s)."""
    import urllib.request

    text = urllib.request.urlopen(f"http://{metrics_url}/metrics", timeout=10).read().decode()
    return {line.split("{")[0]: float(line.split()[-1]) for line in text.splitlines() if line.startswith("llm_")}


def p99(values: list[float]) -> float:
    return float(np.percentile(values, 99))


def long_prompt_ids(codec, repository: Path) -> list[int]:
    """LONG_PROMPT_TOKENS prompt ids, fewer when the model's context is shorter (room for 8 new tokens)."""
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig

    context = GenerationConfig.load(repository / "generate" / "1").max_context
    return codec.encode(LONG_TEXT * (LONG_PROMPT_TOKENS // 10))[:min(LONG_PROMPT_TOKENS, context - 9)].tolist()


def long_prompt_run(url: str, codec, long_ids: list[int], chunk: int) -> dict[str, float]:
    """The long prompt alone (TTFT, completes), and the short streams' p99 ITL with it prefilling over without it
    (measured back to back)."""
    long_values = {"input_ids": long_ids, "max_tokens": 8, "ignore_eos": True}
    alone: list[float] = []
    try:
        started = stream_arrivals(url, "generate", long_values, "token_ids", alone)
        completes = len(alone) == 8
    except RuntimeError as exc:  # a refusal or a dropped stream: the aim is that it completes
        print(f"long prompt failed: {exc}", file=sys.stderr)
        started, completes = time.perf_counter(), False
    short_tokens = SHORT_WARM_TOKENS + 2 * -(-len(long_ids) // (chunk or len(long_ids))) + 40  # decoding all through

    def shorts(with_long: bool) -> list[float]:
        arrivals: list[list[float]] = [[] for _ in range(SHORT_STREAMS)]
        with ThreadPoolExecutor(SHORT_STREAMS) as pool:
            futures = [pool.submit(stream_arrivals, url, "generate", {"input_ids": codec.encode(PROMPTS[i]).tolist(),
                                   "max_tokens": short_tokens, "ignore_eos": True}, "token_ids", arrivals[i])
                       for i in range(SHORT_STREAMS)]
            if not with_long:
                [f.result() for f in futures]
                return [
                    b - a
                    for times in arrivals
                    for a, b in zip(times[SHORT_WARM_TOKENS:], times[SHORT_WARM_TOKENS + 1 :])
                ]
            while min(len(t) for t in arrivals) < SHORT_WARM_TOKENS:
                time.sleep(0.005)
            first: list[float] = []
            sent = stream_arrivals(url, "generate", long_values, "token_ids", first)
            [f.result() for f in futures]
        window = (sent, first[0])  # while the long prompt prefilled
        return [b - a for times in arrivals for a, b in zip(times, times[1:]) if window[0] < b <= window[1]]

    without, during = p99(shorts(False)), p99(shorts(True))
    return {"long_prompt_tokens": len(long_ids), "long_prompt_completes": completes,
            "long_prompt_ttft_ms": 1000 * (alone[0] - started) if alone else float("nan"),
            "itl_p99_without_ms": 1000 * without, "itl_p99_during_ms": 1000 * during, "itl_p99_ratio": during / without}


def process_memory_mib(pid: int) -> dict[str, float]:
    """Proportional set size of the server and of every process under it (the stubs, named after their model),
    MiB: shared pages (libraries) count once in the sum."""
    import psutil

    server = psutil.Process(pid)
    sizes: dict[str, float] = {}
    for process in [server, *server.children(recursive=True)]:
        models = [Path(arg).parts[-3] for arg in process.cmdline() if arg.endswith("model.py")]
        name = models[0] if models else process.name()
        sizes[name] = sizes.get(name, 0.0) + process.memory_full_info().pss / 2**20
    return sizes


def memory_text(sizes: dict[str, float]) -> str:
    return f"{sum(sizes.values()):.0f} MiB (" + ", ".join(f"{k} {v:.0f}" for k, v in sorted(sizes.items())) + ")"


def edited_repository(repository: Path, target: Path, edit: Callable[[str, Any], bool]) -> Path:
    """A copy of the repository (hard links) whose configs `edit(model name, ModelConfig)` may change (True)."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as pb

    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(repository, target, copy_function=os.link)
    for path in target.glob("*/config.pbtxt"):
        config = text_format.Parse(path.read_text(), pb.ModelConfig())
        if edit(path.parent.name, config):
            path.unlink()  # a hard link to the original: write a new file
            path.write_text(text_format.MessageToString(config))
    return target


def chunk_repository(repository: Path, target: Path, chunk: int) -> Path:
    """A copy of the repository whose generate prefills `chunk` prompt tokens per step."""
    def edit(name: str, config: Any) -> bool:
        if name == "generate":
            config.parameters["prefill_chunk_tokens"].string_value = str(chunk)
        return name == "generate"

    return edited_repository(repository, target, edit)


def served(repository: Path, folder: Path) -> Any:
    """An embedded Triton on `repository` (a context manager: started on entry, stopped on exit)."""
    from tritonkit.serve.server import EmbeddedServer

    return EmbeddedServer(repository, work_dir=folder / ".tritonkit", startup_timeout=300)


def stubs_baseline_mib(repository: Path, folder: Path, tiny_model: Path, codec) -> dict[str, float]:
    """PSS of the same repository served with generate's model.onnx swapped for the tiny GPT's (0.2 MB of weights),
    after a short request through generate and through the `llm` ensemble: tritonserver and the stubs, no weights."""
    target = edited_repository(repository, folder / "no_weights", lambda name, config: False)
    onnx = target / "generate" / "1" / "model.onnx"
    onnx.unlink()
    onnx.with_name("model.onnx.data").unlink(missing_ok=True)   # the example's weights file
    shutil.copy2(tiny_model, onnx)
    with served(target, folder) as server:  # "1 2 3": SmolLM2's ids for it are in the tiny GPT's vocabulary too
        stream_arrivals(server.grpc_url, "generate", {"input_ids": codec.encode("1 2 3").tolist(), "max_tokens": 4,
                                                      "ignore_eos": True}, "token_ids", [])
        try:
            # runs the llm ensemble once, as the measured server's warm-up
            served_run(server.grpc_url, ["1 2 3"], 4)
        except RuntimeError as exc:
            print(f"stubs' baseline: the llm request failed ({exc}); measured without it", file=sys.stderr)
        return process_memory_mib(server.pid)


def long_part(repository: Path, folder: Path, codec, chunks: list[int], rounds: int, tiny_model: Path) -> dict:
    """Long-prompt rounds on one server per chunk size, alternated (ABBA), then the first one's memory alone."""
    long_ids = long_prompt_ids(codec, repository)
    baseline = stubs_baseline_mib(repository, folder, tiny_model, codec)
    runs: dict[int, list[dict[str, float]]] = {c: [] for c in chunks}
    with ExitStack() as stack:
        servers = {}
        for chunk in chunks:
            servers[chunk] = stack.enter_context(served(chunk_repository(repository, folder / f"chunk_{chunk}", chunk),
                                                        folder))
            served_run(servers[chunk].grpc_url, PROMPTS[:2], 4)  # warm-up
        loaded = process_memory_mib(servers[chunks[0]].pid) if len(chunks) == 1 else {}  # alone, or not at all
        for r in range(rounds):
            for chunk in (chunks if r % 2 == 0 else chunks[::-1]):
                runs[chunk].append(long_prompt_run(servers[chunk].grpc_url, codec, long_ids, chunk))
                print(f"round {r + 1}, prefill_chunk_tokens {chunk}: "
                      + json.dumps({k: round(float(v), 2) for k, v in runs[chunk][-1].items()}), file=sys.stderr)
        for chunk in chunks[1:]:
            servers.pop(chunk).stop()  # the ExitStack's second stop finds it gone
        after = process_memory_mib(servers[chunks[0]].pid)
    medians = {}
    for chunk, chunk_runs in runs.items():
        medians[chunk] = {k: statistics.median(float(r[k]) for r in chunk_runs) for k in chunk_runs[0]}
        medians[chunk]["long_prompt_completes"] = all(r["long_prompt_completes"] for r in chunk_runs)
    weights = sum(p.stat().st_size for p in (repository / "generate" / "1").glob("model.onnx*")) / 2**20  # + .data
    return medians[chunks[0]] | {
        "prefill_chunk_tokens": chunks[0], "rounds": rounds, "weights_mib": weights,
        "server_memory_mib": sum(after.values()), "memory_after": after, "memory_loaded": loaded,
        "stubs_baseline_mib": sum(baseline.values()), "memory_baseline": baseline,
        "memory_aim_mib": 1.3 * weights + sum(baseline.values()),
        "by_chunk": {c: {"itl_p99_ratio": round(m["itl_p99_ratio"], 2), "ttft_ms": round(m["long_prompt_ttft_ms"])}
                     for c, m in medians.items()}}


def inprocess_batched_run(loaded, prompts: list[str], max_tokens: int) -> Run:
    """All prompts admitted to the served model's engine at once and stepped together in this thread."""
    from tritonkit.pipelines.llm.runtime.sampling import SamplingParams

    engine, params = loaded.engine, SamplingParams(max_tokens=max_tokens, ignore_eos=True)
    prompt_ids = [loaded.codec.encode(p) for p in prompts]
    run = Run(starts=[0.0] * len(prompts), tokens=[[] for _ in prompts])
    started = time.perf_counter()
    for i, ids in enumerate(prompt_ids):
        engine.admit(i, ids, params)
        run.starts[i] = started
    active = list(range(len(prompts)))
    while active:
        outputs = engine.step(active)
        now = time.perf_counter()
        for out in outputs:
            if out.token_ids:
                run.tokens[out.key].append(now)
        active = [k for k in active if k in engine]
    return run


def generate_parameters(repository: Path) -> dict[str, str]:
    """The served generate model's parameters (threads, spinning, KV budget): the in-process runs use the same."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as pb

    config = text_format.Parse((repository / "generate" / "config.pbtxt").read_text(), pb.ModelConfig())
    return {key: value.string_value for key, value in config.parameters.items()}


def inprocess_run(decoder, codec, prompts: list[str], max_tokens: int) -> Run:
    """len(prompts) plain greedy loops in threads over one onnxruntime session (one row a call, each its own
    cache, read and written in place)."""
    from tritonkit.pipelines.llm.runtime.decoder import Row
    from tritonkit.pipelines.llm.runtime.kv_cache import KVCache

    run = Run(starts=[0.0] * len(prompts), tokens=[[] for _ in prompts])
    barrier = threading.Barrier(len(prompts))

    def one(i: int) -> None:
        ids = codec.encode(prompts[i])
        cache = KVCache.empty(decoder.geometry, len(ids) + max_tokens)
        barrier.wait()
        run.starts[i] = time.perf_counter()
        for _ in range(max_tokens):
            logits = decoder.step([Row(cache, ids)])
            ids = np.argmax(logits, axis=-1)
            run.tokens[i].append(time.perf_counter())

    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, range(len(prompts))))
    return run


def one_at_a_time(repository: Path, target: Path) -> Path:
    """A copy of the repository whose generate takes one request per step."""
    def edit(name: str, config: Any) -> bool:
        if name not in ("generate", "llm", "llm_complete"):
            return False
        config.max_batch_size = 1  # generate's: generations advanced per step; the ensembles may not batch more
        return True

    return edited_repository(repository, target, edit)


def built(model: str) -> tuple[Path, Path]:
    """(bench folder, built repository) of an example project."""
    folder, result = build_example(model)
    return folder, result.repository


def build_example(model: str, generate_overrides: dict[str, Any] | None = None) -> tuple[Path, Any]:
    """(bench folder, BuildResult: `tritonkit build --json` is its summary()) of an example project
    (`generate_overrides`: top-level fields of generate replaced, as examples.llm.project.write_project does)."""
    from examples.llm.project import write_project
    from tritonkit.export.progress import StderrProgress
    from tritonkit.pipelines.llm.export.prepare import write_assets
    from tritonkit.repository.build import build

    folder = REPO_ROOT / ".tritonkit" / "bench" / "llm" / model
    # copied into folder/assets if model == "smollm2" else None
    assets = write_assets(model, folder / "prepared_assets")
    spec = write_project(folder, model, assets, generate_overrides=generate_overrides)
    return folder, build(spec, progress=StderrProgress())


def bench_model(model: str, levels: list[int], rows: list[tuple], parts: str, chunks: list[int] | None,
                rounds: int) -> dict[str, dict[int, dict[str, Any]]]:
    from tritonkit.pipelines.llm.runtime.loading import load_engine
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    folder, repository = built(model)
    tokens = TOKENS[model]
    results: dict[str, dict[int, dict[str, Any]]] = {}
    codec = TextCodec(repository / "generate" / "1" / "tokenizer.json")

    if parts in ("all", "throughput"):
        loaded = load_engine(repository / "generate" / "1", generate_parameters(repository))
        decoder = loaded.engine.decoder
        inprocess_run(decoder, codec, PROMPTS[:1], 4)  # warm-up
        results["in-process"] = {c: inprocess_run(decoder, codec, PROMPTS[:c], tokens).summary() for c in levels}
        inprocess_batched_run(loaded, PROMPTS[:2], 4)  # warm-up
        results["in-process batched"] = {
            c: inprocess_batched_run(loaded, PROMPTS[:c], tokens).summary() for c in levels
        }
        del loaded, decoder
        for setup, repo in (("in-flight", repository),
                            ("one-at-a-time", one_at_a_time(repository, folder / "one_at_a_time"))):
            with served(repo, folder) as server:
                served_run(server.grpc_url, PROMPTS[:2], 4)  # warm-up
                results[setup] = {c: served_run(server.grpc_url, PROMPTS[:c], tokens).summary() for c in levels}
        for setup in SETUPS:
            for c in levels:
                r = results[setup][c]
                rows.append((model, setup, c, r["ttft_ms"], r["itl_ms"], r["tok_s"], int(r["tokens"])))
    if parts in ("all", "long"):
        spec_chunk = int(generate_parameters(repository).get("prefill_chunk_tokens") or 0)
        from tritonkit.pipelines.llm.export.prepare import prepare

        prepare("tiny", folder / "tiny_decoder", REPO_ROOT / ".tritonkit" / "cache" / "export")  # cached: seconds
        tiny_model = folder / "tiny_decoder" / "model.onnx"
        results["long prompt"] = {0: long_part(repository, folder, codec, chunks or [spec_chunk], rounds, tiny_model)}
    return results


def long_prompt_lines(model: str, r: dict[str, Any]) -> list[str]:
    lines = [f"{model:8} long prompt of {r['long_prompt_tokens']:.0f} tokens alone (prefill_chunk_tokens "
             f"{r['prefill_chunk_tokens']}, median of {r['rounds']}): completes {r['long_prompt_completes']}, "
             f"TTFT {r['long_prompt_ttft_ms']:.0f} ms",
             f"{model:8} {SHORT_STREAMS} short streams, p99 ITL: {r['itl_p99_without_ms']:.1f} ms alone, "
             f"{r['itl_p99_during_ms']:.1f} ms while the long prompt prefills (ratio {r['itl_p99_ratio']:.2f})"]
    if len(r["by_chunk"]) > 1:
        lines.append(f"{model:8} by prefill_chunk_tokens (p99 ITL ratio, long prompt TTFT ms): "
                     + ", ".join(f"{c}: {v['itl_p99_ratio']}, {v['ttft_ms']}" for c, v in r["by_chunk"].items()))
    if r["memory_loaded"]:
        lines.append(f"{model:8} server memory (PSS) after loading: {memory_text(r['memory_loaded'])}")
    lines += [f"{model:8} server memory (PSS) after the long prompts: {memory_text(r['memory_after'])}",
              f"{model:8} stubs' baseline (generate with the tiny GPT's weights): {memory_text(r['memory_baseline'])}",
              f"{model:8} weights (model.onnx) {r['weights_mib']:.0f} MiB; aim 1.3 x weights + baseline = "
              f"{r['memory_aim_mib']:.0f} MiB; measured {r['server_memory_mib']:.0f} MiB "
              f"({r['server_memory_mib'] / r['memory_aim_mib']:.2f} of the aim)"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,smollm2")
    parser.add_argument("--concurrency", default="1,4,8")
    parser.add_argument("--parts", choices=("all", "throughput", "long"), default="all")
    parser.add_argument("--chunks", default="", help="prefill_chunk_tokens values served side by side (long part)")
    parser.add_argument("--rounds", type=int, default=1, help="long-prompt rounds per chunk value (median)")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    chunks = [int(c) for c in args.chunks.split(",")] if args.chunks else None
    rows: list[tuple] = []
    results = {}
    for model in args.models.split(","):
        results[model] = bench_model(model, levels, rows, args.parts, chunks, args.rounds)
    summary: dict[str, Any] = {}
    last = results[args.models.split(",")[-1]]
    if rows:
        print(f"{'model':8} {'setup':36} {'c':>3} {'TTFT ms':>9} {'ITL ms':>8} {'tok/s':>8} {'tokens':>6}")
        for model, setup, c, ttft, itl, tps, n in rows:
            print(f"{model:8} {SETUPS[setup]:36} {c:>3} {ttft:9.1f} {itl:8.1f} {tps:8.1f} {n:>6}")
        top, one = max(levels), min(levels)
        summary |= {
            f"inflight_over_sequential_c{top}": round(
                last["in-flight"][top]["tok_s"] / last["one-at-a-time"][top]["tok_s"], 2
            ),
            f"inflight_over_inprocess_batched_c{top}": round(
                last["in-flight"][top]["tok_s"] / last["in-process batched"][top]["tok_s"], 2
            ),
            f"served_over_inprocess_c{one}": round(
                last["in-flight"][one]["tok_s"] / last["in-process"][one]["tok_s"], 2
            ),
            f"ttft_ms_c{one}": round(last["in-flight"][one]["ttft_ms"], 1),
            f"itl_ms_c{one}": round(last["in-flight"][one]["itl_ms"], 1),
        }
    if "long prompt" in last:
        for model, result in results.items():
            print("\n".join(long_prompt_lines(model, result["long prompt"][0])))
        r = last["long prompt"][0]
        summary |= {"long_prompt_completes": r["long_prompt_completes"],
                    "long_prompt_ttft_ms": round(r["long_prompt_ttft_ms"], 1),
                    "itl_p99_during_long_prefill_over_without": round(r["itl_p99_ratio"], 2),
                    "server_memory_mib": round(r["server_memory_mib"], 1), "weights_mib": round(r["weights_mib"], 1),
                    "stubs_baseline_mib": round(r["stubs_baseline_mib"], 1),
                    "memory_aim_mib": round(r["memory_aim_mib"], 1),
                    "prefill_chunk_tokens": r["prefill_chunk_tokens"]}
        if r["memory_loaded"]:
            summary["server_memory_loaded_mib"] = round(sum(r["memory_loaded"].values()), 1)
        if len(r["by_chunk"]) > 1:
            summary |= {"itl_p99_ratio_by_chunk": {c: v["itl_p99_ratio"] for c, v in r["by_chunk"].items()},
                        "long_prompt_ttft_ms_by_chunk": {c: v["ttft_ms"] for c, v in r["by_chunk"].items()}}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
