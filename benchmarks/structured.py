"""Structured output benchmark: tokens/s of schema-constrained generation over unconstrained, on the same prompts.

Usage: python benchmarks/structured.py [--model smollm2] [--tokens 64] [--rounds 5] [--concurrency 1,8]

The example project (examples/llm/<model>/) is built once (the export cached under .tritonkit/bench/llm/, as for
benchmarks/llm.py) and served on the embedded Triton with its spec's settings. Clients stream chats from the `llm`
ensemble over gRPC, `c` at once (the prompts of the tuner's fixed set), each generating exactly `--tokens` tokens:
unconstrained with ignore_eos, constrained with a JSON schema whose shortest answer is longer than that (a list of at
least 64 records of strings, bounded integers, enums and booleans), so both end at max_tokens with the same count.
Each round runs both sides back to back on the same server, the same client threads and the same generate threads,
the order alternating between rounds (free first, then constrained first), after a warm-up of both; reported are
the medians over rounds of output tokens per second (all tokens over the run's wall time) and the mask's time per
constrained token, from generate's metrics (llm_grammar_mask_seconds_total over llm_grammar_masks_total).

Prints a table, then the JSON object as the LAST line: {"constrained_over_free_tokens_s_c<c>" for each c (aim >=
0.85), "free_tokens_s_c<c>", "constrained_tokens_s_c<c>", "mask_us_per_token", "tokens", "rounds", "cpu"}.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.llm import build_example, generate_metrics, served  # noqa: E402
from benchmarks.report import cpu_model, print_report  # noqa: E402
from tritonkit.pipelines.llm.tune.stream import PROMPTS, text_run  # noqa: E402

TEXT = {"type": "string", "maxLength": 24}
RECORD = {"type": "object", "additionalProperties": False, "required": ["name", "age", "role", "active", "city"],
          "properties": {"name": TEXT, "age": {"type": "integer", "minimum": 0, "maximum": 120},
                         "role": {"enum": ["engineer", "teacher", "doctor", "artist", "farmer"]},
                         "active": {"type": "boolean"}, "city": TEXT}}
#: An answer of at least 64 records: longer than any --tokens measured, so a constrained stream ends at max_tokens.
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["people"],
          "properties": {"people": {"type": "array", "minItems": 64, "items": RECORD}}}
ASK = " Answer as JSON: a list of people with name, age, role, whether active, and city."


def mask_totals(metrics_url: str) -> tuple[float, float]:
    """(masks computed, seconds spent on them) so far, from generate's metrics (published every cancel_poll_s)."""
    time.sleep(0.5)
    values = generate_metrics(metrics_url)
    return values.get("llm_grammar_masks_total", 0.0), values.get("llm_grammar_mask_seconds_total", 0.0)


def one_run(url: str, prompts: list[str], tokens: int, constrained: bool) -> float:
    """Output tokens per second of `len(prompts)` chats at once."""
    extra: dict[str, Any] = {"chat": True}
    if constrained:
        extra |= {"ignore_eos": False, "json_schema": json.dumps(SCHEMA)}
    summary = text_run(url, "llm", prompts, tokens, "output_ids", extra).summary()
    if summary["tokens"] != tokens * len(prompts):
        raise RuntimeError(f"{'constrained' if constrained else 'free'} run generated {summary['tokens']} tokens, "
                           f"not {tokens} x {len(prompts)}")
    return summary["tok_s"]


def measure(model: str, tokens: int, rounds: int, levels: list[int]) -> dict[str, Any]:
    _, result = build_example(model)
    repository = result.repository
    folder = repository.parent
    speeds: dict[tuple[int, bool], list[float]] = {(c, k): [] for c in levels for k in (False, True)}
    masks: list[float] = []
    with served(repository, folder) as server:
        for c in levels:   # warm-up: the schema compiled, the decoder's buffers sized
            prompts = [p + ASK for p in (PROMPTS * c)[:c]]
            one_run(server.grpc_url, prompts, tokens, False)
            one_run(server.grpc_url, prompts, tokens, True)
        for r in range(rounds):
            for c in levels:
                prompts = [p + ASK for p in (PROMPTS * c)[:c]]
                for constrained in ((False, True) if r % 2 == 0 else (True, False)):
                    before = mask_totals(server.metrics_url) if constrained else (0.0, 0.0)
                    speeds[(c, constrained)].append(one_run(server.grpc_url, prompts, tokens, constrained))
                    if constrained:
                        after = mask_totals(server.metrics_url)
                        if after[0] > before[0]:
                            masks.append((after[1] - before[1]) / (after[0] - before[0]))
    median = {key: statistics.median(values) for key, values in speeds.items()}
    return {"median": median, "mask_s": statistics.median(masks) if masks else float("nan")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", default="1,8")
    args = parser.parse_args(argv)
    levels = [int(c) for c in args.concurrency.split(",")]
    measured = measure(args.model, args.tokens, args.rounds, levels)
    median, cpu = measured["median"], cpu_model()
    rows = [("cpu", cpu, "lscpu")]
    result: dict[str, Any] = {}
    for c in levels:
        free, constrained = median[(c, False)], median[(c, True)]
        rows += [(f"free tokens/s c={c}", f"{free:.1f}", f"{args.model}, {args.tokens} tokens a stream, median"),
                 (f"constrained tokens/s c={c}", f"{constrained:.1f}", "JSON schema (list of records)"),
                 (f"constrained / free c={c}", f"{constrained / free:.2f}", "aim >= 0.85")]
        result |= {f"constrained_over_free_tokens_s_c{c}": round(constrained / free, 3),
                   f"free_tokens_s_c{c}": round(free, 1), f"constrained_tokens_s_c{c}": round(constrained, 1)}
    mask_us = measured["mask_s"] * 1e6
    rows.append(("mask per constrained token", f"{mask_us:.0f} us", "compute + apply, generate's metrics"))
    result |= {"mask_us_per_token": round(mask_us, 1), "tokens": args.tokens, "rounds": args.rounds, "cpu": cpu}
    print_report(rows, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
