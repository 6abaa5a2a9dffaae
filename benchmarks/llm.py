"""LLM pipeline benchmark: in-flight batching vs one request at a time vs in-process onnxruntime loops.

Usage: python benchmarks/llm.py [--models tiny,smollm2] [--concurrency 1,4,8]

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

Long prompt (on the in-flight server, streaming prompt ids from `generate`): a 1,500-token prompt (fewer when the
model's context is shorter) alone, its TTFT and whether it completes; then 7 short streams decoding, alone and
with the same long prompt arriving once each has 10 tokens: the short streams' p99 gap between tokens while the
long prompt prefills (its send to its first token) over their p99 gap without it. Then the server's memory:
proportional set size (PSS) summed over tritonserver and every Python-backend stub, next to the weights' size.

Prints a table; the LAST line is the JSON object for the last model run, keys named after the lowest (lo) and
highest (hi) concurrency measured: {"inflight_over_sequential_c<hi>", "inflight_over_inprocess_batched_c<hi>",
"served_over_inprocess_c<lo>", "ttft_ms_c<lo>", "itl_ms_c<lo>", "long_prompt_completes", "long_prompt_ttft_ms",
"itl_p99_during_long_prefill_over_without", "server_memory_mib", "weights_mib"}.
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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

PROMPTS = ["The capital of France is", "Once upon a time", "Write a haiku about the sea:", "def fibonacci(n):",
           "The three primary colors are", "In 1969, the first person to walk on the Moon was",
           "A recipe for pancakes: first,", "Translate to French: good morning"]
TOKENS = {"tiny": 64, "smollm2": 32}
LONG_PROMPT_TOKENS, SHORT_STREAMS, SHORT_WARM_TOKENS = 1500, 7, 10
LONG_TEXT = "The river rises in the hills, runs through the old town and the fields, and reaches the sea at last. "
#: Result keys and the row labels the table prints for them.
SETUPS = {"in-flight": "served: in-flight batching", "one-at-a-time": "served: one request per step",
          "in-process": "in-process: c threads, batch 1 each", "in-process batched": "in-process: batched engine"}


@dataclass
class Run:
    """Token arrival times of the requests of one (setup, concurrency) run."""

    starts: list[float] = field(default_factory=list)
    tokens: list[list[float]] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        ttft = [t[0] - s for s, t in zip(self.starts, self.tokens) if t]
        gaps = [statistics.mean(np.diff(t)) for t in self.tokens if len(t) > 1]
        total = sum(len(t) for t in self.tokens)
        wall = max(t[-1] for t in self.tokens if t) - min(self.starts)
        return {"ttft_ms": 1000 * statistics.mean(ttft), "itl_ms": 1000 * statistics.mean(gaps), "tok_s": total / wall,
                "tokens": total}


def stream_arrivals(url: str, model: str, values: dict, ids_output: str, arrivals: list[float],
                    ready: threading.Barrier | None = None) -> float:
    """One gRPC stream; appends each token's arrival time to `arrivals`; returns when it was sent (after `ready`)."""
    import queue

    import tritonclient.grpc as grpcclient

    from tests.llm.clients import grpc_inputs

    client = grpcclient.InferenceServerClient(url)
    events: queue.Queue = queue.Queue()
    client.start_stream(callback=lambda result, error: events.put((time.perf_counter(), result, error)))
    inputs = grpc_inputs(values)
    if ready is not None:
        ready.wait()
    sent = time.perf_counter()
    client.async_stream_infer(model, inputs, outputs=[grpcclient.InferRequestedOutput(ids_output)],
                              enable_empty_final_response=True)
    while True:
        at, result, error = events.get(timeout=600)
        if error is not None:
            raise RuntimeError(str(error))
        ids = result.as_numpy(ids_output)
        if ids is not None and ids.size:
            arrivals.append(at)
        final = result.get_response().parameters.get("triton_final_response")
        if final is not None and final.bool_param:
            break
    client.stop_stream()
    client.close()
    return sent


def served_run(url: str, prompts: list[str], max_tokens: int) -> Run:
    """len(prompts) concurrent gRPC streams to the `llm` ensemble."""
    run = Run(starts=[0.0] * len(prompts), tokens=[[] for _ in prompts])
    barrier = threading.Barrier(len(prompts))

    def one(i: int) -> None:
        values = {"text_input": prompts[i], "max_tokens": max_tokens, "ignore_eos": True}
        run.starts[i] = stream_arrivals(url, "llm", values, "output_ids", run.tokens[i], barrier)

    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, range(len(prompts))))
    return run


def p99(values: list[float]) -> float:
    return float(np.percentile(values, 99))


def long_prompt_run(url: str, codec, repository: Path) -> dict[str, float]:
    """The long prompt alone (TTFT, completes), and the short streams' p99 ITL with it prefilling over without it."""
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig

    context = GenerationConfig.load(repository / "generate" / "1").max_context
    long_ids = codec.encode(LONG_TEXT * (LONG_PROMPT_TOKENS // 10))[:min(LONG_PROMPT_TOKENS, context - 9)].tolist()
    long_values = {"input_ids": long_ids, "max_tokens": 8, "ignore_eos": True}
    alone: list[float] = []
    try:
        started = stream_arrivals(url, "generate", long_values, "token_ids", alone)
        completes = len(alone) == 8
    except RuntimeError as exc:  # a refusal or a dropped stream: the aim is that it completes
        print(f"long prompt failed: {exc}", file=sys.stderr)
        started, completes = time.perf_counter(), False
    chunk = int(generate_parameters(repository).get("prefill_chunk_tokens") or len(long_ids))
    short_tokens = SHORT_WARM_TOKENS + 2 * -(-len(long_ids) // chunk) + 40  # decoding all through the prefill

    def shorts(with_long: bool) -> list[float]:
        arrivals: list[list[float]] = [[] for _ in range(SHORT_STREAMS)]
        with ThreadPoolExecutor(SHORT_STREAMS) as pool:
            futures = [pool.submit(stream_arrivals, url, "generate", {"input_ids": codec.encode(PROMPTS[i]).tolist(),
                                   "max_tokens": short_tokens, "ignore_eos": True}, "token_ids", arrivals[i])
                       for i in range(SHORT_STREAMS)]
            if not with_long:
                [f.result() for f in futures]
                return [b - a for times in arrivals for a, b in zip(times[SHORT_WARM_TOKENS:], times[SHORT_WARM_TOKENS + 1:])]
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
            "itl_p99_without_ms": 1000 * without, "itl_p99_during_ms": 1000 * during}


def server_memory_mib(pid: int) -> float:
    """Proportional set size of the server and every process under it (the models' stubs), MiB: shared pages
    (libraries, a model file mapped twice) count once in the sum."""
    import psutil

    server = psutil.Process(pid)
    return sum(p.memory_full_info().pss for p in [server, *server.children(recursive=True)]) / 2**20


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
    """len(prompts) plain greedy loops in threads over one onnxruntime session."""
    run = Run(starts=[0.0] * len(prompts), tokens=[[] for _ in prompts])
    barrier = threading.Barrier(len(prompts))
    geometry = decoder.geometry

    def one(i: int) -> None:
        ids = codec.encode(prompts[i])[np.newaxis]
        shape = (1, geometry.layers, geometry.kv_heads, 0, geometry.head_dim)
        past_key = past_value = np.zeros(shape, np.float32)
        barrier.wait()
        run.starts[i] = time.perf_counter()
        for _ in range(max_tokens):
            logits, past_key, past_value = decoder.run(ids, past_key, past_value, np.array([[past_key.shape[3]]]),
                                                       np.array([[ids.shape[1]]]))
            ids = np.argmax(logits, axis=-1)[:, np.newaxis]
            run.tokens[i].append(time.perf_counter())

    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, range(len(prompts))))
    return run


def one_at_a_time(repository: Path, target: Path) -> Path:
    """A copy of the repository whose generate takes one request per step (configs edited as protobuf)."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as pb

    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(repository, target, copy_function=os.link)
    for name in ("generate", "llm", "llm_complete"):
        path = target / name / "config.pbtxt"
        config = text_format.Parse(path.read_text(), pb.ModelConfig())
        config.max_batch_size = 1
        if name == "generate":
            del config.sequence_batching.oldest.preferred_batch_size[:]
            config.sequence_batching.oldest.preferred_batch_size.append(1)
        path.unlink()  # a hard link to the original: write a new file
        path.write_text(text_format.MessageToString(config))
    return target


def bench_model(model: str, levels: list[int], rows: list[tuple]) -> dict[str, dict[int, dict[str, float]]]:
    from examples.llm.project import write_project
    from tritonkit.export.progress import StderrProgress
    from tritonkit.pipelines.llm.export.prepare import write_assets
    from tritonkit.pipelines.llm.runtime.loading import load_engine
    from tritonkit.repository.build import build
    from tritonkit.serve.server import EmbeddedServer

    folder = REPO_ROOT / ".tritonkit" / "bench" / "llm" / model
    assets = write_assets(model, folder / "prepared_assets")  # copied into folder/assets if model == "smollm2" else None
    spec = write_project(folder, model, assets)
    repository = build(spec, progress=StderrProgress()).repository
    tokens = TOKENS[model]
    results: dict[str, dict[int, dict[str, float]]] = {}

    loaded = load_engine(repository / "generate" / "1", generate_parameters(repository))
    decoder, codec = loaded.engine.decoder, loaded.codec
    inprocess_run(decoder, codec, PROMPTS[:1], 4)  # warm-up
    results["in-process"] = {c: inprocess_run(decoder, codec, PROMPTS[:c], tokens).summary() for c in levels}
    inprocess_batched_run(loaded, PROMPTS[:2], 4)  # warm-up
    results["in-process batched"] = {c: inprocess_batched_run(loaded, PROMPTS[:c], tokens).summary() for c in levels}
    del loaded, decoder

    for setup, repo in (("in-flight", repository), ("one-at-a-time", one_at_a_time(repository, folder / "one_at_a_time"))):
        server = EmbeddedServer(repo, work_dir=folder / ".tritonkit", startup_timeout=300)
        server.start()
        try:
            served_run(server.grpc_url, PROMPTS[:2], 4)  # warm-up
            results[setup] = {c: served_run(server.grpc_url, PROMPTS[:c], tokens).summary() for c in levels}
            if setup == "in-flight":
                long_run = long_prompt_run(server.grpc_url, codec, repository)
                long_run["server_memory_mib"] = server_memory_mib(server.pid)
                long_run["weights_mib"] = (repository / "generate" / "1" / "model.onnx").stat().st_size / 2**20
                results["long prompt"] = {0: long_run}
        finally:
            server.stop()
    for setup in SETUPS:
        for c in levels:
            r = results[setup][c]
            rows.append((model, setup, c, r["ttft_ms"], r["itl_ms"], r["tok_s"], int(r["tokens"])))
    return results


def long_prompt_lines(model: str, r: dict[str, float]) -> list[str]:
    return [f"{model:8} long prompt of {r['long_prompt_tokens']} tokens alone: completes {r['long_prompt_completes']}, "
            f"TTFT {r['long_prompt_ttft_ms']:.0f} ms",
            f"{model:8} {SHORT_STREAMS} short streams, p99 ITL: {r['itl_p99_without_ms']:.1f} ms alone, "
            f"{r['itl_p99_during_ms']:.1f} ms while the long prompt prefills",
            f"{model:8} server memory (PSS, tritonserver + stubs): {r['server_memory_mib']:.0f} MiB; "
            f"weights (model.onnx): {r['weights_mib']:.0f} MiB"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tiny,smollm2")
    parser.add_argument("--concurrency", default="1,4,8")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    rows: list[tuple] = []
    results = {}
    for model in args.models.split(","):
        results[model] = bench_model(model, levels, rows)
    print(f"{'model':8} {'setup':36} {'c':>3} {'TTFT ms':>9} {'ITL ms':>8} {'tok/s':>8} {'tokens':>6}")
    for model, setup, c, ttft, itl, tps, n in rows:
        print(f"{model:8} {SETUPS[setup]:36} {c:>3} {ttft:9.1f} {itl:8.1f} {tps:8.1f} {n:>6}")
    for model, result in results.items():
        print("\n".join(long_prompt_lines(model, result["long prompt"][0])))
    last = results[args.models.split(",")[-1]]
    top, one = max(levels), min(levels)
    summary = {
        f"inflight_over_sequential_c{top}": round(last["in-flight"][top]["tok_s"] / last["one-at-a-time"][top]["tok_s"], 2),
        f"inflight_over_inprocess_batched_c{top}":
            round(last["in-flight"][top]["tok_s"] / last["in-process batched"][top]["tok_s"], 2),
        f"served_over_inprocess_c{one}": round(last["in-flight"][one]["tok_s"] / last["in-process"][one]["tok_s"], 2),
        f"ttft_ms_c{one}": round(last["in-flight"][one]["ttft_ms"], 1),
        f"itl_ms_c{one}": round(last["in-flight"][one]["itl_ms"], 1),
    }
    long_run = last["long prompt"][0]
    summary |= {"long_prompt_completes": long_run["long_prompt_completes"],
                "long_prompt_ttft_ms": round(long_run["long_prompt_ttft_ms"], 1),
                "itl_p99_during_long_prefill_over_without": round(long_run["itl_p99_during_ms"] / long_run["itl_p99_without_ms"], 2),
                "server_memory_mib": round(long_run["server_memory_mib"], 1), "weights_mib": round(long_run["weights_mib"], 1)}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
