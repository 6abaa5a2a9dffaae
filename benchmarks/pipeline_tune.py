"""What `tritonkit tune PIPELINE --joint` gains on the ASR and TTS ensembles, and how its search compares with a grid.

Usage: python benchmarks/pipeline_tune.py [--quick] [--pipelines asr,tts] [--rounds 3] [--concurrency 8]
       [--budget 16] [--repeats 3] [--knobs instances,threads] [--max-p99-ms MS] [--grid asr,tts] [--keep DIR]

For each pipeline (the asr starter's offline `asr` ensemble, the tts starter's `tts` ensemble) in a work folder:
  1. the joint search (coordinate descent, at most --budget configurations, each the median of --repeats
     perf_analyzer runs at --concurrency, under --max-p99-ms) without writing the spec;
  2. the brute-force grid over exactly the same space, each configuration measured the same way (only for the
     pipelines --grid names);
  3. the default (the spec's own settings), the search's winner and the grid's best measured again in --rounds
     alternating rounds; the ratios are of the medians over rounds;
  4. in the same rounds, the ceiling: the pipeline's own steps run in this process, no serving, at the same
     concurrency (Python threads) on perf_analyzer's request (asr: benchmarks/asr.py's InProcess; tts:
     benchmarks/tts.py's Synthesizer), from the default build and from the default build with each value the
     search gives a threads knob; `<pipeline>_inprocess_over_default` is the best of them over the default: about
     what settings of how the steps are served can reach, an estimate, not a bound (served, the steps run in
     processes of their own beside each other, where these threads share one interpreter: the TTS served beat it).
The LLM (`--llm-model`, the example project examples/llm/<model>; `--pipelines` without llm skips it): the joint
search of `llm` (generate's max_batch_size, kv_cache_bytes, threads; at most --llm-budget
configurations) for output tokens/s under --max-ttft-ms and --max-itl-ms (p99s, tune's streaming clients,
--llm-tokens tokens a stream, --concurrency streams), then the default and the winner measured again in --rounds
alternating rounds: `llm_tuned_over_default_tokens_s` is the ratio of the medians; with --grid naming llm, the grid
over the same space too, and its best in the same rounds (`llm_grid_best_over_default_tokens_s`: how far any
configuration of the space gets past the default, `llm_tuned_over_grid_best`); its ceiling is the
default build's generate engine (and one per threads value) stepping the same prompts together in this process
(benchmarks/llm.py's in-process batched run), `llm_inprocess_over_default_tokens_s`. --quick: instance counts
only, at most 2 per step, 30-request windows, 1 repeat, 1 round, asr and the tiny LLM starter model only.
Time on 2 cores: --quick ~10 min (two acoustic exports of ~80 s, 5 + 8 configurations, measured under a
load average of 21, when the numbers are noise); a full run (instances and threads, 2 instances at most: a grid
of 24 ASR and 12 TTS configurations, 3 repeats, 3 final rounds) is estimated at 1 to 1.5 h on a quiet machine.
Adding queue_delay_us multiplies each batching step's share of the grid by 6 (ASR: 5184), so it is left out of
the grid comparison. Prints a table; the LAST line is {"asr_tuned_over_default", "asr_tuned_over_grid_best",
"asr_measurements_tune", "asr_measurements_grid", "tts_tuned_over_default", "llm_tuned_over_default_tokens_s",
"asr_inprocess_over_default", "tts_inprocess_over_default", "llm_inprocess_over_default_tokens_s",
"asr_grid_best_over_default", "llm_grid_best_over_default_tokens_s", "llm_tuned_over_grid_best",
"llm_measurements_tune", "llm_measurements_grid"}.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.asr import Clip, InProcess  # noqa: E402
from benchmarks.llm import generate_parameters, inprocess_batched_run  # noqa: E402
from benchmarks.report import print_report  # noqa: E402
from benchmarks.tts import in_process as tts_in_process  # noqa: E402
from examples.asr.project import write_project as write_asr  # noqa: E402
from examples.tts.project import write_project as write_tts  # noqa: E402
from tritonkit.pipelines import registry  # noqa: E402
from tritonkit.pipelines.llm.runtime.loading import load_engine  # noqa: E402
from tritonkit.pipelines.llm.tune.measure import measure_llm  # noqa: E402
from tritonkit.pipelines.llm.tune.measure import prompts as llm_prompts  # noqa: E402
from tritonkit.triton.layout import read_config  # noqa: E402
from tritonkit.tune.options import Constraints, TuneOptions  # noqa: E402
from tritonkit.tune.space.knobs import Point, default_point, describe_point  # noqa: E402
from tritonkit.tune.space.steps import point_configs  # noqa: E402
from tritonkit.tune.strategies import knob_search  # noqa: E402
from tritonkit.tune.strategies.knob_search import JointOutcome  # noqa: E402
from tritonkit.tune.targets.engine import StreamBench  # noqa: E402
from tritonkit.tune.targets.perf import Bench, measure, write_candidate  # noqa: E402

registry.install()
PIPELINES = {"asr": (write_asr, "asr"), "tts": (write_tts, "tts")}
IN_PROCESS = "in process"
#: Requests each in-process thread sends a round: asr ~1 s at 8 threads, tts ~10 s at 4 (a paragraph ~0.5 s each).
IN_PROCESS_REQUESTS = {"asr": 60, "tts": 6}


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _search(spec: Path, model: str, args: argparse.Namespace, search: str, budget: int) -> JointOutcome:
    bound = Constraints(max_p99_ms=args.max_p99_ms)
    options = TuneOptions(model, spec, "throughput", bound, "brute" if search == "grid" else "quick", joint=True,
                          budget=budget, repeats=args.repeats, concurrency=args.concurrency,
                          measurement_requests=args.measurement_requests, max_instances=args.max_instances,
                          knobs=tuple(args.knobs.split(",")), write=False,
                          confirm_rounds=args.confirm_rounds if search == "descent" else 0)
    return knob_search.run(options, _say)


def _final(tuned: JointOutcome, points: dict[str, Point], rounds: int,
           sides: dict[str, Callable[[], float]] | None = None) -> dict[str, list[float]]:
    """Each configuration served and measured once per round, and each of `sides` (measured by its callable), the
    order rotating: infer/s (an LLM: tokens/s) per round."""
    target = tuned.target
    configs = {m: read_config(tuned.tune_dir.built / m) for m in (*target.models, *target.followers)}
    bench = replace(tuned.bench, repeats=1)
    sides = sides or {}
    out: dict[str, list[float]] = {name: [] for name in [*points, *sides]}
    names = list(out)
    for index in range(rounds):
        for name in names[index % len(names):] + names[:index % len(names)]:
            if name in sides:
                out[name].append(sides[name]())
                unit = "tokens/s" if isinstance(bench, StreamBench) else "infer/s"
                _say(f"[final {index + 1}/{rounds}] {name}: {out[name][-1]:.1f} {unit}")
                continue
            folder = tuned.tune_dir.root / "final" / name.replace(" ", "-")
            repo = write_candidate(tuned.tune_dir.built, folder, point_configs(points[name], configs, tuned.knobs))
            log = tuned.tune_dir.logs / f"final-{folder.name}.log"
            if isinstance(bench, StreamBench):
                llm = measure_llm(repo, bench, tuned.tune_dir.root, log)
                out[name].append(llm.tokens_per_s)
                _say(f"[final {index + 1}/{rounds}] {name}: {llm.tokens_per_s:.1f} tokens/s, p99 TTFT "
                     f"{llm.ttft_p99_ms:.1f} ms, p99 ITL {llm.itl_p99_ms:.1f} ms")
                continue
            sample = measure(repo, bench, tuned.tune_dir.root, log)
            out[name].append(sample.throughput)
            _say(f"[final {index + 1}/{rounds}] {name}: {sample.throughput:.1f} infer/s, p99 {sample.p99_ms:.1f} ms")
    return out


def _threads_rate(one: Callable[[], object], threads: int, each: int) -> Callable[[], float]:
    """A side measured by `threads` Python threads calling `one` `each` times: infer/s (after one warm-up round)."""
    def rate() -> float:
        def run(_: int) -> None:
            for _ in range(each):
                one()

        started = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(run, range(threads)))
        return threads * each / (time.perf_counter() - started)

    rate()
    return rate


def _request(tuned: JointOutcome) -> dict[str, np.ndarray]:
    """The one request perf_analyzer sends the pipeline (its --input-data: the pipeline's golden request)."""
    assert isinstance(tuned.bench, Bench) and tuned.bench.input_data, "measured on the pipeline's golden request"
    data = json.loads(Path(tuned.bench.input_data).read_text())["data"][0]
    return {name: np.asarray(value["content"]).reshape(value["shape"]) for name, value in data.items()}


def _settings_builds(tuned: JointOutcome) -> dict[str, Path]:
    """The default build, and for each value the search gives a threads knob, the default build with that one
    setting changed (written like a candidate): the in-process ceiling takes the best of them, since a step's threads
    change its compute, not only how it is served."""
    target, built = tuned.target, tuned.tune_dir.built
    configs = {m: read_config(built / m) for m in (*target.models, *target.followers)}
    builds = {IN_PROCESS: built}
    for knob in tuned.knobs:
        for value in knob.values if knob.name == "threads" else ():
            if value != knob.default:
                point = default_point(tuned.knobs) | {knob.key: value}
                folder = tuned.tune_dir.root / "in-process" / f"{knob.step}-threads-{value}"
                builds[f"{IN_PROCESS}, {knob.step} threads {value}"] = write_candidate(
                    built, folder, point_configs(point, configs, tuned.knobs))
    return builds


def _in_process(name: str, tuned: JointOutcome, args: argparse.Namespace) -> dict[str, Callable[[], float]]:
    """The ceiling of what serving settings can reach: the pipeline's own steps run in this process at the same
    concurrency (Python threads) on perf_analyzer's request, once per build of `_settings_builds`: asr through
    benchmarks/asr.py's InProcess (fbank, one onnxruntime session, one WfstDecoder), tts through benchmarks/tts.py's
    Synthesizer (the frontend with espeak-ng, one Kokoro session); infer/s."""
    request = _request(tuned)
    make: Callable[[Path], Callable[[], object]]
    if name == "asr":
        clip = Clip(request["PCM"].astype(np.float32).reshape(-1), int(request["SAMPLE_RATE"].reshape(-1)[0]), [])
        make = lambda built: partial(InProcess(built).transcribe, clip)  # noqa: E731
    else:
        text = str(request["text"].reshape(-1)[0])
        voice = str(request["voice"].reshape(-1)[0]) if "voice" in request else None
        speed = float(request["speed"].reshape(-1)[0]) if "speed" in request else 1.0
        make = lambda built: partial(tts_in_process(built).synthesize, text, voice, speed)  # noqa: E731
    return {label: _threads_rate(make(built), args.concurrency, IN_PROCESS_REQUESTS[name])
            for label, built in _settings_builds(tuned).items()}


def _in_process_llm(tuned: JointOutcome, args: argparse.Namespace) -> dict[str, Callable[[], float]]:
    """The LLM's ceiling: each build's generate engine loaded in this process (benchmarks/llm.py's in-process
    batched run: the same prompts admitted at once and stepped together, no serving), output tokens/s."""
    sides: dict[str, Callable[[], float]] = {}
    for label, built in _settings_builds(tuned).items():
        loaded = load_engine(built / "generate" / "1", generate_parameters(built))
        inprocess_batched_run(loaded, llm_prompts(2), 4)   # warm-up
        sides[label] = partial(_tokens_s, loaded, llm_prompts(args.concurrency), args.llm_tokens)
    return sides


def _tokens_s(loaded: Any, prompts: list[str], tokens: int) -> float:
    return float(inprocess_batched_run(loaded, prompts, tokens).summary()["tok_s"])


def _ceiling(name: str, runs: dict[str, list[float]], default: float) -> tuple[float, list[tuple[str, str, str]]]:
    """The best in-process side's median over the default's, and a table row per in-process side."""
    inside = {label: statistics.median(values) for label, values in runs.items() if label.startswith(IN_PROCESS)}
    best = max(inside, key=inside.__getitem__)
    rows = [(f"{name} {label}", f"{value:.1f}", f"median of {len(runs[label])}: the steps in this process, no serving"
             f"{'; the best: the ceiling' if label == best else ''}") for label, value in inside.items()]
    return round(inside[best] / default, 3), rows


def _compare(name: str, tuned: JointOutcome, grid: JointOutcome | None, rounds: int,
             sides: dict[str, Callable[[], float]], unit: str) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The default, the search's winner and the grid's best (when measured) served again in alternating rounds beside
    the in-process `sides`: the medians' ratios, the ceiling, and how many configurations each search measured."""
    default = default_point(tuned.knobs)
    points = {"default": default, "tuned": tuned.points[tuned.choice.winner.variant]}
    if grid is not None:
        points["grid best"] = grid.points[grid.choice.winner.variant]
    runs = _final(tuned, points, rounds, sides)
    med = {k: statistics.median(v) for k, v in runs.items()}
    rows = [(f"{name} {k}", f"{med[k]:.1f}", f"{unit} median of {len(runs[k])} ({describe_point(points[k], default)})")
            for k in points]
    found: dict[str, Any] = {"tuned_over_default": round(med["tuned"] / med["default"], 3),
                             "measurements_tune": len(tuned.trace.measured)}
    found["inprocess_over_default"], inside = _ceiling(name, runs, med["default"])
    rows += inside
    if grid is None:
        rows.append((f"{name} measurements", str(len(tuned.trace.measured)),
                     f"tune (space of {tuned.summary()['grid_size']})"))
        return found, rows
    rows.append((f"{name} measurements", f"{len(tuned.trace.measured)} vs {len(grid.trace.measured)}",
                 f"tune vs grid (space of {grid.summary()['grid_size']})"))
    found.update(tuned_over_grid_best=round(med["tuned"] / med["grid best"], 3),
                 grid_best_over_default=round(med["grid best"] / med["default"], 3),
                 measurements_grid=len(grid.trace.measured))
    return found, rows


def run_pipeline(name: str, work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    write, model = PIPELINES[name]
    spec = write(work / name)
    tuned = _search(spec, model, args, "descent", args.budget)
    grid = _search(spec, model, args, "grid", 10_000) if name in args.grid.split(",") else None
    return _compare(name, tuned, grid, args.rounds, _in_process(name, tuned, args), "infer/s")


def run_llm(work: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """The LLM example's `llm`: tune's descent for tokens/s under the TTFT and ITL bounds (and the grid over the same
    space when --grid names llm), then default vs winner (vs the grid's best)."""
    from examples.llm.project import write_project as write_llm
    from tritonkit.pipelines.llm.export.prepare import write_assets

    folder = work / "llm"
    spec = write_llm(folder, args.llm_model, write_assets(args.llm_model, folder / "prepared_assets"))
    bound = Constraints(max_ttft_ms=args.max_ttft_ms, max_itl_ms=args.max_itl_ms)
    options = TuneOptions("llm", spec, "throughput", bound, joint=True, budget=args.llm_budget, repeats=args.repeats,
                          concurrency=args.concurrency, knobs=tuple(args.llm_knobs.split(",")),
                          max_tokens=args.llm_tokens, write=False, confirm_rounds=args.confirm_rounds)
    tuned = knob_search.run(options, _say)
    grid = (knob_search.run(replace(options, mode="brute", budget=10_000, confirm_rounds=0), _say)
            if "llm" in args.grid.split(",") else None)
    return _compare("llm", tuned, grid, args.rounds, _in_process_llm(tuned, args), "tokens/s")


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
    parser.add_argument("--llm-knobs", default="max_batch_size,kv_cache_bytes,threads")
    parser.add_argument("--max-ttft-ms", type=float, default=None, help="LLM: p99 time to first token bound")
    parser.add_argument("--max-itl-ms", type=float, default=None, help="LLM: p99 inter-token gap bound")
    parser.add_argument("--confirm-rounds", type=int, default=2,
                        help="the search's confirmation of its winner against the default (tune --joint's; the grid "
                             "gets none: the final rounds compare them all)")
    parser.add_argument("--grid", default="asr,tts",
                        help="pipelines whose grid is measured too (asr, tts, llm) [default: asr,tts; '' for none: "
                             "the TTS grid alone is 12 configurations of ~9 min each at 100-request windows]")
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
        "llm_tuned_over_default_tokens_s": llm.get("tuned_over_default"),
        "asr_inprocess_over_default": asr.get("inprocess_over_default"),
        "tts_inprocess_over_default": tts.get("inprocess_over_default"),
        "llm_inprocess_over_default_tokens_s": llm.get("inprocess_over_default"),
        # the grid's best over the default: how far any configuration of the searched space got past the default
        "asr_grid_best_over_default": asr.get("grid_best_over_default"),
        "llm_grid_best_over_default_tokens_s": llm.get("grid_best_over_default"),
        "llm_tuned_over_grid_best": llm.get("tuned_over_grid_best"),
        "llm_measurements_tune": llm.get("measurements_tune"), "llm_measurements_grid": llm.get("measurements_grid")})


if __name__ == "__main__":
    main()
