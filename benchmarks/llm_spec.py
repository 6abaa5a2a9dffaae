"""Speculative decoding served: SmolLM2-135M (the example as its spec builds it) with n-gram drafts against the same
repository with them off, side by side, on extractive and open-ended chats, c=1 and c=8.

Usage: python benchmarks/llm_spec.py [--rounds 5] [--tokens 96]
Example (~10 min, quiet machine, the example's export cached under .tritonkit/bench/llm/):
    nice -n 15 .venv/bin/python benchmarks/llm_spec.py --rounds 5 > llm_spec.txt

Two embedded Tritons, up together: the built repository as it is (generate's draft_tokens, 7 by default) and a copy
with draft_tokens 0, started anew each round, the one started first alternating (two engines loaded one after the
other have run 5-7% apart whichever they were: runtime/decoder.py). Each prompt is a chat in the model's own format
(system prompt "You are a helpful assistant."), sent as text to the `llm` ensemble over gRPC streams, greedy, up to
`--tokens` tokens, ending at the model's end token as a user's request does; both servers must give every request
the same tokens (checked: drafts change nothing but speed). Extractive prompts (EXTRACTIVE) ask to repeat, quote,
edit or rewrite a given passage or code; open ones (OPEN) ask for new text. c=1 sends a workload's 8 prompts one
after another, c=8 all at once. Each round runs every (workload, c) on both servers, the one started first first;
the table gives medians over the rounds of tokens/s (all tokens over the time the requests ran) and the drafted
tokens kept, from the drafting server's /metrics (llm_draft_accepted_tokens_total over llm_draft_tokens_total).

The limit: a decoder call's time grows with the tokens it runs (onnxruntime's int4 kernels), so verifying k drafted
tokens costs a call of k + 1 tokens whether they are kept or not. In process, on the served decoder with generate's
threads, one row after 100 positions: the call's time for 1..8 tokens (median of 15), and what that allows at c=1:
`bound_c1_all_kept` = max over k of (k + 1) x t(1) / t(k + 1), the speed-up were every drafted token kept, and
`bound_c1_extractive` the same at the measured share kept (p: the expected tokens a call, sum of p^i for i <= k,
over its time); the same for 8 rows of 1..4 tokens each (`bound_c8_*`).

Prints the table; the LAST line is the JSON object {"spec_over_plain_tokens_s_c1_extractive",
"spec_over_plain_tokens_s_c8_extractive", "spec_over_plain_tokens_s_c1_open", "spec_over_plain_tokens_s_c8_open",
"kept_extractive", "kept_open", "call_ms_by_tokens", "bound_c1_all_kept", "bound_c1_extractive",
"call_ms_c8_by_tokens", "bound_c8_all_kept", "bound_c8_extractive", "same_output", "cpu", "rounds"}.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llm import build_example, edited_repository, generate_metrics, generate_parameters, served  # noqa: E402
from report import cpu_model  # noqa: E402

from tritonkit.pipelines.llm.tune.stream import Run, text_run  # noqa: E402

PASSAGE = ("The Triton Inference Server serves models from a model repository. Each model has a configuration file "
           "that names its inputs, outputs, batching and instances. Dynamic batching groups requests that arrive "
           "close together into one batch, which raises throughput at a small cost in latency.")
CODE = ("def mean(values):\n    total = 0\n    for value in values:\n        total += value\n"
        "    return total / len(values)\n")
EXTRACTIVE = [f"Repeat this passage word for word:\n\n{PASSAGE}",
              f"Rename the function to average and show the whole code:\n\n{CODE}",
              f"Quote the first two sentences of this text:\n\n{PASSAGE}",
              f"Add a docstring to this function and show the whole code:\n\n{CODE}",
              f"Copy this code exactly:\n\n{CODE}",
              f"Summarize this text in two sentences:\n\n{PASSAGE}",
              "Fix the spelling and repeat the text: Teh Triton servr serves modls from a modl repository. Each modl "
              "has a configuraton file that nams its inputs and outputs.",
              f"Rewrite this passage in the past tense:\n\n{PASSAGE}"]
OPEN = ["Write a short story about a robot who learns to paint.", "What are three tips for staying healthy?",
        "Explain how a rainbow forms.", "Give me a recipe for pancakes.", "Why is the sky blue?",
        "Describe your ideal vacation.", "What is machine learning?", "Write a poem about the sea."]
WORKLOADS = {"extractive": EXTRACTIVE, "open": OPEN}
SYSTEM = "You are a helpful assistant."
LEVELS = (1, 8)


def chats(folder: Path, prompts: list[str]) -> list[str]:
    """The prompts as the model's chat format writes them, with the system prompt."""
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
    from tritonkit.pipelines.llm.runtime.chat import format_chat

    chat = GenerationConfig.load(folder).chat
    assert chat is not None, f"{folder}/generation.json has no chat format"
    return [format_chat(chat, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": p}])
            for p in prompts]


def without_drafts(repository: Path, target: Path) -> Path:
    """A copy of the repository whose generate drafts nothing (draft_tokens 0)."""
    def edit(name: str, config: Any) -> bool:
        if name == "generate":
            config.parameters["draft_tokens"].string_value = "0"
        return name == "generate"

    return edited_repository(repository, target, edit)


def drafts_counted(metrics_url: str) -> tuple[float, float]:
    """(drafted, accepted) tokens so far, from the server's /metrics."""
    values = generate_metrics(metrics_url)
    return values.get("llm_draft_tokens_total", 0.0), values.get("llm_draft_accepted_tokens_total", 0.0)


def workload_run(url: str, prompts: list[str], c: int, tokens: int) -> tuple[float, list[int]]:
    """(tokens/s, tokens of each request): the prompts `c` at a time, each group after the one before."""
    total, seconds, counts = 0, 0.0, []
    for start in range(0, len(prompts), c):
        run: Run = text_run(url, "llm", prompts[start:start + c], tokens, extra={"ignore_eos": False})
        counts += [len(t) for t in run.tokens]
        total += sum(len(t) for t in run.tokens)
        seconds += max(t[-1] for t in run.tokens if t) - min(run.starts)
    return total / seconds, counts


def call_times(folder: Path, params: dict[str, str], rows: int, widths: range, repeats: int = 15) -> dict[int, float]:
    """Median ms of one decoder call of `rows` rows after 100 cached positions each, by tokens a row."""
    from tritonkit.pipelines.llm.runtime.decoder import Row
    from tritonkit.pipelines.llm.runtime.loading import load_engine

    engine = load_engine(folder, params).engine
    caches = [engine.pool.allocate(f"probe{i}", 128) for i in range(rows)]
    rng = np.random.default_rng(0)
    engine.decoder.step([Row(cache, rng.integers(0, 1000, 100)) for cache in caches])
    times: dict[int, list[float]] = {w: [] for w in widths}
    for _ in range(repeats):
        for w in widths:
            started = time.perf_counter()
            engine.decoder.tails([Row(cache, rng.integers(0, 1000, w), w) for cache in caches])
            times[w].append(1000 * (time.perf_counter() - started))
            for cache in caches:
                cache.length -= w
    return {w: statistics.median(t) for w, t in times.items()}


def bound(call_ms: dict[int, float], kept: float) -> float:
    """The c=1 speed-up of the best draft length when each drafted token is kept with probability `kept`."""
    return max(sum(kept ** i for i in range(w)) * call_ms[1] / call_ms[w] for w in call_ms)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=96, help="most tokens a request generates")
    args = parser.parse_args(argv)

    folder, result = build_example("smollm2")
    repository = result.repository
    generate = repository / "generate" / "1"
    plain_repository = without_drafts(repository, folder / "no_drafts")
    prompts = {name: chats(generate, p) for name, p in WORKLOADS.items()}
    speeds: dict[tuple[str, int, str], list[float]] = {}
    kept: dict[str, list[float]] = {name: [] for name in WORKLOADS}
    outputs: dict[tuple[str, int, str], list[int]] = {}
    repositories = {"drafts": repository, "plain": plain_repository}
    for turn in range(args.rounds):
        order = ("drafts", "plain") if turn % 2 == 0 else ("plain", "drafts")
        with ExitStack() as stack:
            sides = {side: stack.enter_context(served(repositories[side], folder)) for side in order}
            for server in sides.values():
                workload_run(server.grpc_url, prompts["open"][:2], 2, 8)   # warm-up
            for name in WORKLOADS:
                for c in LEVELS:
                    for side in order:
                        server = sides[side]
                        before = drafts_counted(server.metrics_url)
                        speed, counts = workload_run(server.grpc_url, prompts[name], c, args.tokens)
                        speeds.setdefault((name, c, side), []).append(speed)
                        outputs.setdefault((name, c, side), counts)
                        if side == "drafts" and c == 1:
                            time.sleep(1.0)   # generate publishes its counters every cancel_poll_s
                            after = drafts_counted(server.metrics_url)
                            kept[name].append((after[1] - before[1]) / max(1.0, after[0] - before[0]))
                        print(f"round {turn + 1}/{args.rounds} {name} c={c} {side}: {speed:.1f} tokens/s",
                              file=sys.stderr)
    call_ms = call_times(generate, generate_parameters(repository), 1, range(1, 9))
    call_ms_c8 = call_times(generate, generate_parameters(repository), 8, range(1, 5))
    same = all(outputs[(n, c, "drafts")] == outputs[(n, c, "plain")] for n in WORKLOADS for c in LEVELS)
    median = {key: statistics.median(values) for key, values in speeds.items()}
    kept_median = {name: statistics.median(values) for name, values in kept.items()}
    cpu = cpu_model()
    print(f"SmolLM2-135M served as the example builds it, {cpu}, generate's threads, medians of {args.rounds} rounds, "
          f"up to {args.tokens} tokens a request; the same tokens both sides: {same}")
    print(f"{'workload':11} {'c':>2} {'drafts tok/s':>13} {'plain tok/s':>12} {'ratio':>6} {'kept':>6}")
    out: dict[str, Any] = {}
    for name in WORKLOADS:
        for c in LEVELS:
            on, off = median[(name, c, "drafts")], median[(name, c, "plain")]
            out[f"spec_over_plain_tokens_s_c{c}_{name}"] = round(on / off, 3)
            print(f"{name:11} {c:>2} {on:13.1f} {off:12.1f} {on / off:6.3f} "
                  f"{kept_median[name] if c == 1 else float('nan'):6.2f}")
    for rows, table in ((1, call_ms), (8, call_ms_c8)):
        print(f"decoder call, {rows} row(s) after 100 positions: "
              + ", ".join(f"{w} token(s) a row {ms:.2f} ms" for w, ms in table.items()))
    out |= {"kept_extractive": round(kept_median["extractive"], 3), "kept_open": round(kept_median["open"], 3),
            "call_ms_by_tokens": {w: round(ms, 2) for w, ms in call_ms.items()},
            "bound_c1_all_kept": round(bound(call_ms, 1.0), 3),
            "bound_c1_extractive": round(bound(call_ms, kept_median["extractive"]), 3),
            "call_ms_c8_by_tokens": {w: round(ms, 2) for w, ms in call_ms_c8.items()},
            "bound_c8_all_kept": round(bound(call_ms_c8, 1.0), 3),
            "bound_c8_extractive": round(bound(call_ms_c8, kept_median["extractive"]), 3),
            "same_output": same, "cpu": cpu, "machine": platform.machine(), "rounds": args.rounds}
    for c in LEVELS:
        print(f"limit at c={c}: {out[f'bound_c{c}_all_kept']:.2f}x were every drafted token kept, "
              f"{out[f'bound_c{c}_extractive']:.2f}x at the extractive share kept ({out['kept_extractive']:.2f})")
    print(json.dumps(out))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
