"""The ASR benchmark's c=8 comparison: the `asr` ensemble in its tuned configuration against the same steps in process.

The tuned configuration is what `tritonkit tune asr --joint` writes: the joint search runs here on the benchmark's own
project (knobs: each step's instances and the acoustic model's threads, throughput at 8 concurrent perf_analyzer
clients, no latency bound) and writes the winners to the spec's `tuned:` block, which the build serves. The winners
are cached under .tritonkit/bench/asr/, keyed by the spec, the search settings and the core count, so a rerun
rebuilds with them instead of searching again (`--retune` searches anew; `--tuned FILE` takes the `tuned:` block of a
spec that `tritonkit tune asr --joint` wrote). Per-step Triton statistics say where the served time goes.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import tritonclient.grpc as grpcclient
import yaml

from tritonkit.errors import TritonkitError
from tritonkit.pipelines import registry
from tritonkit.spec.tuned import TunedModel
from tritonkit.tune.options import Constraints, TuneOptions
from tritonkit.tune.results.writeback import write_back_spec
from tritonkit.tune.strategies import knob_search

registry.install()
REPO_ROOT = Path(__file__).resolve().parents[1]
CACHE = REPO_ROOT / ".tritonkit" / "bench" / "asr"
CLIENTS = 8
STEPS = ("features", "acoustic", "decoder")


class Timed(Protocol):
    @property
    def seconds(self) -> float: ...


C = TypeVar("C", bound=Timed)


@dataclass(frozen=True)
class Search:
    """The joint search asr.py runs: at most `budget` configurations, each `repeats` perf_analyzer runs of
    `requests`-request windows at CLIENTS concurrent clients."""

    budget: int = 8
    repeats: int = 1
    requests: int = 100
    knobs: str = "instances,threads"


def read_overlay(path: Path) -> dict[str, TunedModel]:
    """The `tuned:` block of a spec (or of a cached overlay) as the spec's own types."""
    try:
        block = (yaml.safe_load(path.read_text()) or {}).get("tuned") or {}
        return {name: TunedModel.model_validate(entry) for name, entry in block.items()}
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise SystemExit(f"{path}: tuned: cannot be read ({str(exc).splitlines()[0]}); give a spec that "
                         "`tritonkit tune asr --joint` wrote") from None


def _cache_file(spec: Path, search: Search) -> Path:
    """Keyed by what decides the winners: the spec (and the ensemble it includes), the search, the cores."""
    key = json.dumps({"spec": spec.read_text(), "ensemble": (REPO_ROOT / "ensembles" / "asr.yaml").read_text(),
                      "search": asdict(search), "cores": os.cpu_count()}, sort_keys=True)
    return CACHE / f"tuned-{hashlib.sha256(key.encode()).hexdigest()[:16]}.yaml"


def tuned_build(spec: Path, search: Search, overlay: Path | None, retune: bool,
                say: Callable[[str], None]) -> tuple[Path, str]:
    """Builds `spec` with asr's tuned settings; returns the repository and where the settings came from."""
    if overlay is not None:
        try:
            return write_back_spec(spec, read_overlay(overlay)).repository, f"from {overlay}"
        except TritonkitError as exc:   # e.g. settings for a model this project does not have
            raise SystemExit(f"{overlay}: {exc.line()}") from None
    cache = _cache_file(spec, search)
    if cache.is_file() and not retune:
        return write_back_spec(spec, read_overlay(cache)).repository, f"cached {cache.relative_to(REPO_ROOT)}"
    options = TuneOptions("asr", spec, "throughput", Constraints(), joint=True, budget=search.budget,
                          repeats=search.repeats, concurrency=CLIENTS, measurement_requests=search.requests,
                          knobs=tuple(search.knobs.split(",")))
    outcome = knob_search.run(options, say)
    if outcome.build is None:
        raise SystemExit("tune asr --joint wrote nothing back")
    cache.parent.mkdir(parents=True, exist_ok=True)
    tuned = {name: t.model_dump(mode="json", exclude_none=True) for name, t in outcome.tuned.items()}
    cache.write_text(yaml.safe_dump({"tuned": tuned}, sort_keys=False))
    return outcome.build.repository, (f"tuned now ({len(outcome.trace.measured)} configurations, winner "
                                      f"{outcome.winner_settings}), cached in {cache.relative_to(REPO_ROOT)}")


def throughput(transcribe: Callable[[int, C], object], clips: Sequence[C], passes: int) -> float:
    """Audio seconds per wall second with CLIENTS threads, each transcribing every clip `passes` times (thread k
    starts at clip k) through `transcribe(k, clip)`."""
    def run(k: int) -> None:
        for clip in ([*clips[k:], *clips[:k]] * passes):
            transcribe(k, clip)

    with ThreadPoolExecutor(CLIENTS) as pool:
        started = time.perf_counter()
        for done in [pool.submit(run, k % len(clips)) for k in range(CLIENTS)]:
            done.result()
        elapsed = time.perf_counter() - started
    return CLIENTS * passes * sum(c.seconds for c in clips) / elapsed


def step_statistics(client: grpcclient.InferenceServerClient) -> dict[str, dict[str, int]]:
    """Each step's cumulative Triton counters: requests, executions (batches), and queue / compute nanoseconds."""
    out = {}
    for step in STEPS:
        stats: dict[str, Any] = client.get_inference_statistics(step, as_json=True)["model_stats"][0]
        infer = stats["inference_stats"]

        def ns(field: str, infer: dict[str, Any] = infer) -> int:
            return int(infer.get(field, {}).get("ns", 0))

        out[step] = {"requests": int(infer.get("success", {}).get("count", 0)),
                     "executions": int(stats.get("execution_count", 0)), "queue_ns": ns("queue"),
                     "compute_ns": ns("compute_input") + ns("compute_infer") + ns("compute_output")}
    return out


def where_time_goes(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]],
                    instances: dict[str, int]) -> list[tuple[str, str, str]]:
    """Table rows: per step, queue and compute milliseconds per request and requests per execution, between two
    snapshots of `step_statistics`."""
    rows = []
    for step in STEPS:
        delta = {k: after[step][k] - before[step][k] for k in after[step]}
        requests = max(delta["requests"], 1)
        rows.append((f"  c=8 served: {step}", f"{delta['queue_ns'] / requests / 1e6:.2f} ms queue",
                     f"{delta['compute_ns'] / requests / 1e6:.2f} ms compute per request, "
                     f"{delta['requests'] / max(delta['executions'], 1):.2f} requests per execution, "
                     f"{instances.get(step, 1)} instance(s)"))
    return rows
