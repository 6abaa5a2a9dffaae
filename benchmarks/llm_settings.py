"""generate's thread and step settings side by side: c=1 and c=8 tokens/s of the served `llm` ensemble.

Usage: python benchmarks/llm_settings.py [--model smollm2] [--rounds 6] [--variants intra1,intra2,intra2-nospin]

Each variant is a copy of the example's built repository (hard links, benchmarks/llm.py's build) with generate's
config edited: onnxruntime's intra-op threads (`intra_op_thread_count`), whether its idle worker threads spin
(`allow_spinning`) and for how long (`spin_duration_us`), the generations a step advances (`max_batch_size`), and
whether the loaded weights go onto 2 MiB pages (`huge_pages`).
Every variant is served at once and each round runs c=1 then c=8 (32 greedy tokens a
stream, benchmarks/llm.py's clients and prompts) on each variant, the order rotated every round, so a shared
machine's load falls on each alike.
Prints each variant's medians; the last line is JSON: {variant: {"c1_tok_s", "c8_tok_s", "c1_ttft_ms",
"c8_ttft_ms", "c1_itl_ms", "c8_itl_ms", "c1_tok_s_rounds", "c8_tok_s_rounds"}}.

onnxruntime's inter-op threads are not a variant: generate's session runs its graph sequentially (the default
execution mode), where they are unused; parallelism across requests is the in-flight batch itself.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm import PROMPTS, built, edited_repository, served, served_run  # noqa: E402

#: Variant name -> generate's parameters, and "step_batch" for its max_batch_size (generations advanced per step).
VARIANTS: dict[str, dict[str, Any]] = {
    "spec": {},
    "intra1": {"intra_op_thread_count": "1"},
    "intra2": {"intra_op_thread_count": "2", "allow_spinning": "1", "spin_duration_us": None},  # onnxruntime's spin
    "intra2-nospin": {"intra_op_thread_count": "2", "allow_spinning": "0"},
    "intra2-spin20": {"intra_op_thread_count": "2", "allow_spinning": "1", "spin_duration_us": "20"},
    "intra2-spin100": {"intra_op_thread_count": "2", "allow_spinning": "1", "spin_duration_us": "100"},
    "default-nospin": {"intra_op_thread_count": "0", "allow_spinning": "0"},
    "intra2-batch8": {"intra_op_thread_count": "2", "step_batch": 8},
    "4k-pages": {"huge_pages": "0"},  # the weights left on 4 KiB pages
}
TOKENS, LEVELS = 32, (1, 8)


def variant_repository(repository: Path, target: Path, settings: dict[str, Any]) -> Path:
    def edit(name: str, config: Any) -> bool:
        if name in ("llm", "llm_complete") and "step_batch" in settings:  # Triton: no more than their step batches
            config.max_batch_size = min(config.max_batch_size, settings["step_batch"])
            return True
        if name != "generate":
            return False
        for key, value in settings.items():
            if key == "step_batch":
                config.max_batch_size = value
            elif value is None:  # onnxruntime's default
                config.parameters.pop(key, None)
            else:
                config.parameters[key].string_value = value
        return True

    return edited_repository(repository, target, edit)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--variants", default="intra1,intra2,intra2-nospin", help=f"of {', '.join(VARIANTS)}")
    args = parser.parse_args(argv)
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant {unknown[0]!r}; choose from {', '.join(VARIANTS)}")
    folder, repository = built(args.model)
    runs: dict[str, dict[int, list[dict[str, float]]]] = {n: {c: [] for c in LEVELS} for n in names}
    with ExitStack() as stack:
        servers = {}
        for name in names:
            repo = variant_repository(repository, folder / "settings" / name, VARIANTS[name])
            servers[name] = stack.enter_context(served(repo, folder / "settings" / f"{name}-work"))
            served_run(servers[name].grpc_url, PROMPTS[:2], 4)  # warm-up
        for r in range(args.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                for c in LEVELS:
                    runs[name][c].append(served_run(servers[name].grpc_url, PROMPTS[:c], TOKENS).summary())
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    result: dict[str, dict[str, Any]] = {}
    for name in names:
        row: dict[str, Any] = {}
        for c in LEVELS:
            for key, label in (("tok_s", "tok_s"), ("ttft_ms", "ttft_ms"), ("itl_ms", "itl_ms")):
                row[f"c{c}_{label}"] = round(statistics.median(x[key] for x in runs[name][c]), 1)
            row[f"c{c}_tok_s_rounds"] = [round(x["tok_s"], 1) for x in runs[name][c]]
        result[name] = row
        print(f"{name:18} " + "  ".join(f"c={c} {row[f'c{c}_tok_s']:6.1f} tok/s (TTFT {row[f'c{c}_ttft_ms']:.0f} ms, "
                                         f"ITL {row[f'c{c}_itl_ms']:.1f})" for c in LEVELS))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
