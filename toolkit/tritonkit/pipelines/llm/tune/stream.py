"""Streaming LLM clients: c gRPC streams sent at once, each token's arrival time kept (TTFT, inter-token gaps,
tokens/s). `tune --joint` measures an LLM pipeline with them (`measure.py`) and benchmarks/llm.py reports with them,
so a tuned configuration's numbers are the benchmark's.

perf_analyzer's report has no time to first token or inter-token latency (only per-request latency; per-response
timestamps only in its profile export, per request, not per token of a fixed prompt set), hence these clients.
"""
import queue
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: The fixed prompt set: request i of a run sends PROMPTS[i % len(PROMPTS)].
PROMPTS = ["The capital of France is", "Once upon a time", "Write a haiku about the sea:", "def fibonacci(n):",
           "The three primary colors are", "In 1969, the first person to walk on the Moon was",
           "A recipe for pancakes: first,", "Translate to French: good morning"]
#: Input name -> numpy type of the LLM pipeline's request tensors (object: UTF-8 strings).
TYPES = {"text_input": object, "system_prompt": object, "stop": object, "chat": bool, "ignore_eos": bool,
         "max_tokens": np.int32, "top_k": np.int32, "temperature": np.float32, "top_p": np.float32, "seed": np.uint64,
         "stop_token_ids": np.int64, "input_ids": np.int64, "json_schema": object, "regex": object, "choice": object,
         "grammar": object}


@dataclass
class Run:
    """Token arrival times of the requests of one run (perf_counter seconds); `starts`: when each was sent."""

    starts: list[float] = field(default_factory=list)
    tokens: list[list[float]] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """Means (`ttft_ms`, `itl_ms`: per request's mean gap), p99s over every request's TTFT and every gap, and
        output tokens per second over the whole run."""
        ttft = [t[0] - s for s, t in zip(self.starts, self.tokens) if t]
        gaps = [float(g) for t in self.tokens for g in np.diff(t)]
        total = sum(len(t) for t in self.tokens)
        wall = max(t[-1] for t in self.tokens if t) - min(self.starts)
        return {"ttft_ms": 1000 * statistics.mean(ttft),
                "itl_ms": 1000 * statistics.mean(statistics.mean(np.diff(t)) for t in self.tokens if len(t) > 1),
                "ttft_p99_ms": 1000 * float(np.percentile(ttft, 99)),
                "itl_p99_ms": 1000 * float(np.percentile(gaps, 99)) if gaps else 0.0,
                "tok_s": total / wall, "tokens": total}


def grpc_inputs(values: dict[str, Any]) -> list[Any]:
    """Batch-1 tensors for an LLM pipeline model from plain values (lists for the [-1] inputs)."""
    import tritonclient.grpc as grpcclient
    from tritonclient.utils import np_to_triton_dtype

    tensors = []
    for name, value in values.items():
        items = value if isinstance(value, list) else [value]
        array = np.array([[v.encode() for v in items]] if TYPES[name] is object else [items], dtype=TYPES[name])
        tensors.append(grpcclient.InferInput(name, list(array.shape), np_to_triton_dtype(array.dtype))
                       .set_data_from_numpy(array))
    return tensors


def stream_arrivals(url: str, model: str, values: dict, ids_output: str, arrivals: list[float],
                    ready: threading.Barrier | None = None) -> float:
    """One gRPC stream; appends each token's arrival time to `arrivals` (the tokens of one response arrive together);
    returns when it was sent (after `ready`)."""
    import tritonclient.grpc as grpcclient

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
            arrivals.extend([at] * ids.size)   # a response may carry several tokens (accepted drafts)
        final = result.get_response().parameters.get("triton_final_response")
        if final is not None and final.bool_param:
            break
    client.stop_stream()
    client.close()
    return sent


def clients_run(stream: Callable[[str, list[float], threading.Barrier], float], prompts: list[str]) -> Run:
    """One client thread per prompt, all sending at once: `stream(prompt, arrivals, ready)` appends each token's
    arrival time and returns when it sent (after `ready`)."""
    run = Run(starts=[0.0] * len(prompts), tokens=[[] for _ in prompts])
    barrier = threading.Barrier(len(prompts))

    def one(i: int) -> None:
        run.starts[i] = stream(prompts[i], run.tokens[i], barrier)

    with ThreadPoolExecutor(len(prompts)) as pool:
        list(pool.map(one, range(len(prompts))))
    return run


def text_run(url: str, model: str, prompts: list[str], max_tokens: int, ids_output: str = "output_ids",
             extra: dict | None = None) -> Run:
    """len(prompts) concurrent streams of text in, `max_tokens` greedy tokens out (ignore_eos) from `model`."""
    def stream(prompt: str, arrivals: list[float], ready: threading.Barrier) -> float:
        values = {"text_input": prompt, "max_tokens": max_tokens, "ignore_eos": True} | (extra or {})
        return stream_arrivals(url, model, values, ids_output, arrivals, ready)

    return clients_run(stream, prompts)
