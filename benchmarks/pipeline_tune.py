"""What `tritonkit tune PIPELINE --joint` gains on the ASR and TTS ensembles, and how its search compares with a grid.

Usage: python benchmarks/pipeline_tune.py [--quick] [--pipelines asr,tts] [--rounds 3] [--concurrency 8]
       [--budget 16] [--repeats 3] [--knobs instances,threads] [--max-p99-ms MS] [--grid asr,tts] [--keep DIR]

For each pipeline (the asr starter's offline `asr` ensemble, the tts starter's `tts` ensemble) in a work folder:
  1. the joint search (coordinate descent, at most --budget configurations, each the median of --repeats
     perf_analyzer runs at --concurrency, under --max-p99-ms) without writing the spec;
  2. the brute-force grid over exactly the same space, each configuration measured the same way (only for the
     pipelines --grid names);
  3. the default (the spec's own settings), the search's winner and the grid's best measured again in --rounds
     alternating rounds; the ratios are of the medians over rounds.
The LLM (`--llm-model`, the example project examples/llm/<model>; `--pipelines` without llm skips it): the joint
search of `llm` (generate's max_batch_size, queue delay, kv_cache_bytes, threads; at most --llm-budget
configurations) for output tokens/s under --max-ttft-ms and --max-itl-ms (p99s, tune's streaming clients,
--llm-tokens tokens a stream, --concurrency streams), then the default and the winner measured again in --rounds
alternating rounds: `llm_tuned_over_default_tokens_s` is the ratio of the medians (no grid). --quick: instance counts
only, at most 2 per step, 30-request windows, 1 repeat, 1 round, asr and the tiny LLM starter model only.
Time on 2 cores: --quick ~10 min (two acoustic exports of ~80 s, 5 + 8 configurations, measured under a
load average of 21, when the numbers are noise); a full run (instances and threads, 2 instances at most: a grid
of 24 ASR and 12 TTS configurations, 3 repeats, 3 final rounds) is estimated at 1 to 1.5 h on a quiet machine.
Adding queue_delay_us multiplies each batching step's share of the grid by 6 (ASR: 5184), so it is left out of
the grid comparison. Prints a table; the LAST line is {"asr_tuned_over_default", "asr_tuned_over_grid_best",
"asr_measurements_tune", "asr_measurements_grid", "tts_tuned_over_default", "llm_tuned_over_default_tokens_s"}.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.report import print_report  # noqa: E402
from examples.asr.project import write_project as write_asr  # noqa: E402
from examples.tts.project import write_project as write_tts  # noqa: E402
from tritonkit.triton.layout import read_config  # noqa: E402
from tritonkit.tune.joint_api import JointOptions, JointOutcome, tune_pipeline  # noqa: E402
from tritonkit.tune.joint_measure import measure, write_candidate  # noqa: E402
from tritonkit.tune.joint_space import Point, default_point, describe_point, point_configs  # noqa: E402
from tritonkit.tune.llm_measure import LlmBench, measure_llm  # noqa: E402
from tritonkit.tune.options import Constraints  # noqa: E402

PIPELINES = {"asr": (write_asr, "asr"), "tts": (write_tts, "tts")}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _search(spec: Path, model: str, args: argparse.Namespace, search: str, budget: int) -> JointOutcome:
    bound = Constraints(max_p99_ms=args.max_p99_ms)
    options = JointOptions(model, spec, "throughput", bound, search, budget,  # type: ignore[arg-type]
                           args.repeats, args.concurrency, args.measurement_requests,
                           max_instances=args.max_instances, knobs=tuple(args.knobs.split(",")), write=False,
                           confirm_rounds=args.confirm_rounds if search == "descent" else 0)
    return tune_pipeline(options, _say)


def _final(tuned: JointOutcome, points: dict[str, Point], rounds: int) -> dict[str, list[float]]:
    """Each configuration served and measured once per round, the order rotating: infer/s (an LLM: tokens/s) per
    round."""
    target = tuned.target
    configs = {m: read_config(tuned.tune_dir.built / m) for m in (*target.models, *target.followers)}
    bench = replace(tuned.bench, repeats=1)
    out: dict[str, list[float]] = {name: [] for name in points}
    names = list(points)
    for index in range(rounds):
        for name in names[index % len(names):] + names[:index % len(names)]:
            folder = tuned.tune_dir.root / "final" / name.replace(" ", "-")
            repo = write_candidate(tuned.tune_dir.built, folder, point_configs(points[name], configs, target.engine))
            log = tuned.tune_dir.logs / f"final-{folder.name}.log"
            if isinstance(bench, LlmBench):
                llm = measure_llm(repo, bench, tuned.tune_dir.root, log)
                out[name].append(llm.tokens_per_s)
                _say(f"[final {index + 1}/{rounds}] {name}: {llm.tokens_per_s:.1f} tokens/s, p99 TTFT "
                     f"{llm.ttft_p99_ms:.1f} ms, p99 ITL {llm.itl_p99_ms:.1f} ms")
                continue
            sample = measure(repo, bench, tuned.tune_dir.root, log)
            out[name].append(sample.throughput)
            _say(f"[final {index + 1}/{rounds}] {name}: {sample.throughput:.1f} infer/s, p99 {sample.p99_ms:.1f} ms")
    return out


def run_pipeline(name: str, work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    write, model = PIPELINES[name]
    spec = write(work / name)
    tuned = _search(spec, model, args, "descent", args.budget)
    grid = _search(spec, model, args, "grid", 10_000) if name in args.grid.split(",") else None
    default = default_point(tuned.knobs)
    points = {"default": default, "tuned": tuned.points[tuned.choice.winner.variant]}
    if grid is not None:
        points["grid best"] = grid.points[grid.choice.winner.variant]
    runs = _final(tuned, points, args.rounds)
    med = {k: statistics.median(v) for k, v in runs.items()}
    rows = [(f"{name} {k}", f"{med[k]:.1f}", f"infer/s median of {len(runs[k])} ({describe_point(points[k], default)})")
            for k in points]
    found = {"tuned_over_default": round(med["tuned"] / med["default"], 3),
             "measurements_tune": len(tuned.trace.measured)}
    if grid is not None:
        rows.append((f"{name} measurements", f"{len(tuned.trace.measured)} vs {len(grid.trace.measured)}",
                     f"tune vs grid (space of {grid.summary()['grid_size']})"))
        found.update(tuned_over_grid_best=round(med["tuned"] / med["grid best"], 3),
                     measurements_grid=len(grid.trace.measured))
    return found, rows


def run_llm(work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The LLM example's `llm`: tune's descent for tokens/s under the TTFT and ITL bounds, then default vs winner."""
    from examples.llm.project import write_project as write_llm
    from tritonkit.pipelines.llm.export.prepare import write_assets

    folder = work / "llm"
    spec = write_llm(folder, args.llm_model, write_assets(args.llm_model, folder / "prepared_assets"))
    bound = Constraints(max_ttft_ms=args.max_ttft_ms, max_itl_ms=args.max_itl_ms)
    options = JointOptions("llm", spec, "throughput", bound, "descent", args.llm_budget, args.repeats,
                           args.concurrency, knobs=tuple(args.llm_knobs.split(",")), max_tokens=args.llm_tokens,
                           write=False, confirm_rounds=args.confirm_rounds)
    tuned = tune_pipeline(options, _say)
    default = default_point(tuned.knobs)
    points = {"default": default, "tuned": tuned.points[tuned.choice.winner.variant]}
    runs = _final(tuned, points, args.rounds)
    med = {k: statistics.median(v) for k, v in runs.items()}
    rows = [(f"llm {k}", f"{med[k]:.1f}", f"tokens/s median of {len(runs[k])} ({describe_point(points[k], default)})")
            for k in points]
    rows.append(("llm measurements", str(len(tuned.trace.measured)), f"tune (space of {tuned.summary()['grid_size']})"))
    return {"tuned_over_default": round(med["tuned"] / med["default"], 3)}, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pipelines", default=None,
                        help="comma-separated: asr,tts,llm [default: all; asr,llm with --quick]")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--budget", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--measurement-requests", type=int, default=100)
    parser.add_argument("--max-p99-ms", type=float, default=None)
    parser.add_argument("--max-instances", type=int, default=2)
    parser.add_argument("--knobs", default="instances,threads")
    parser.add_argument("--llm-model", default=None, help="examples/llm recipe [default: smollm2; tiny with --quick]")
    parser.add_argument("--llm-budget", type=int, default=10)
    parser.add_argument("--llm-tokens", type=int, default=32)
    parser.add_argument("--llm-knobs", default="max_batch_size,queue_delay_us,kv_cache_bytes,threads")
    parser.add_argument("--max-ttft-ms", type=float, default=None, help="LLM: p99 time to first token bound")
    parser.add_argument("--max-itl-ms", type=float, default=None, help="LLM: p99 inter-token gap bound")
    parser.add_argument("--confirm-rounds", type=int, default=2,
                        help="the search's confirmation of its winner against the default (tune --joint's; the grid "
                             "gets none: the final rounds compare them all)")
    parser.add_argument("--grid", default="asr,tts",
                        help="pipelines whose grid is measured too [default: asr,tts; '' for none: the TTS grid alone "
                             "is 12 configurations of ~9 min each at 100-request windows]")
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temporary one, removed)")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.repeats, args.measurement_requests, args.knobs = 1, 1, 30, "instances"
        args.llm_budget, args.llm_tokens = min(args.llm_budget, 4), min(args.llm_tokens, 16)
    args.llm_model = args.llm_model or ("tiny" if args.quick else "smollm2")
    pipelines = (args.pipelines or ("asr,llm" if args.quick else "asr,tts,llm")).split(",")
    work = args.keep or Path(tempfile.mkdtemp(prefix="tritonkit-pipeline-tune-"))
    results: dict[str, Any] = {}
    rows: list[tuple[str, str, str]] = []
    try:
        for name in pipelines:
            found, table = run_llm(work, args) if name == "llm" else run_pipeline(name, work, args)
            results[name] = found
            rows += table
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    asr, tts, llm = results.get("asr", {}), results.get("tts", {}), results.get("llm", {})
    print_report(rows, {
        "asr_tuned_over_default": asr.get("tuned_over_default"),
        "asr_tuned_over_grid_best": asr.get("tuned_over_grid_best"),
        "asr_measurements_tune": asr.get("measurements_tune"), "asr_measurements_grid": asr.get("measurements_grid"),
        "tts_tuned_over_default": tts.get("tuned_over_default"),
        "llm_tuned_over_default_tokens_s": llm.get("tuned_over_default")})


if __name__ == "__main__":
    main()
