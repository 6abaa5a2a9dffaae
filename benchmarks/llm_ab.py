"""Two built LLM repositories served side by side: the same c=1 and c=8 streams, alternating rounds.

Usage: python benchmarks/llm_ab.py REPO_A REPO_B [--rounds 6]
Example (a change against the commit before it; each repository built at its own commit, its generate's files
copied in at build time, so both run as built):
    git worktree add /tmp/before HEAD~1 && (cd /tmp/before && make setup && .venv/bin/tritonkit build -f
        examples/llm/smollm2/tritonkit.yaml)
    .venv/bin/tritonkit build -f examples/llm/smollm2/tritonkit.yaml
    nice -n 15 .venv/bin/python benchmarks/llm_ab.py /tmp/before/examples/llm/smollm2/model_repository \\
        examples/llm/smollm2/model_repository --rounds 6

Both servers are up for the whole run (embedded Triton each); every round runs the 8 prompts of benchmarks/llm.py
one after another (c=1) and all at once (c=8), 32 greedy tokens a stream, gRPC streams to `llm`, on A then B, the
order swapped every round so a shared machine's load falls on both alike. Prints a table of medians; the last line
is {"a_tok_s_c1", "b_tok_s_c1", "a_tok_s_c8", "b_tok_s_c8", "a_itl_ms_c1", "b_itl_ms_c1", "b_over_a_c1",
"b_over_a_c8"}.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm import PROMPTS, served, served_run  # noqa: E402
from llm_peers import MAX_TOKENS, medians, rotated, summarize  # noqa: E402


def measure(urls: dict[str, str], rounds: int) -> dict[str, dict[str, float]]:
    """Per side, medians over the rounds: tokens/s c=1 and c=8, ITL c=1."""
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in urls}
    for url in urls.values():
        served_run(url, PROMPTS[:2], 8)  # warm-up
    for turn in range(rounds):
        for side in rotated(list(urls), turn):
            one = summarize([served_run(urls[side], [p], MAX_TOKENS) for p in PROMPTS])
            eight = summarize([served_run(urls[side], PROMPTS, MAX_TOKENS)])
            runs[side].append({"c1": one["tok_s"], "itl": one["itl_ms"], "c8": eight["tok_s"]})
        print(f"round {turn + 1}/{rounds}: " + json.dumps(
            {side: {k: round(v, 1) for k, v in r[-1].items()} for side, r in runs.items()}), file=sys.stderr)
    return {side: medians(r) for side, r in runs.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n")[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo_a", type=Path)
    parser.add_argument("repo_b", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work, served(args.repo_a, Path(work) / "a") as a, \
            served(args.repo_b, Path(work) / "b") as b:
        med = measure({"A": a.grpc_url, "B": b.grpc_url}, args.rounds)
    print("| repository | tokens/s c=1 | ITL ms c=1 | tokens/s c=8 |\n|---|---|---|---|")
    for side, path in (("A", args.repo_a), ("B", args.repo_b)):
        print(f"| {side}: {path} | {med[side]['c1']:.1f} | {med[side]['itl']:.1f} | {med[side]['c8']:.1f} |")
    print(json.dumps({
        "a_tok_s_c1": round(med["A"]["c1"], 1), "b_tok_s_c1": round(med["B"]["c1"], 1),
        "a_tok_s_c8": round(med["A"]["c8"], 1), "b_tok_s_c8": round(med["B"]["c8"], 1),
        "a_itl_ms_c1": round(med["A"]["itl"], 2), "b_itl_ms_c1": round(med["B"]["itl"], 2),
        "b_over_a_c1": round(med["B"]["c1"] / med["A"]["c1"], 3),
        "b_over_a_c8": round(med["B"]["c8"] / med["A"]["c8"], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
