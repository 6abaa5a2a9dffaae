"""Model Analyzer's profile config (its YAML), generated from the target, its search space and the options.

One function per section, so the YAML a user sees with `--dry-run` reads like the options they gave. The measurement
window and input data go into the global `perf_analyzer_flags` (per-model flags would replace, not extend, them).
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonkit.tune.analyzer.space import ModelSpace, SearchSpace
from tritonkit.tune.analyzer.wrappers import Wrappers
from tritonkit.tune.layout import TuneDir
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.targets.model import TuneTarget

#: Keys whose values change from run to run without changing what is measured (ignored for resuming).
VOLATILE_KEYS = ("model_repository", "triton_http_endpoint", "triton_grpc_endpoint", "triton_metrics_url")
#: perf_analyzer measures with a fixed number of requests per window (steadier than time windows on CPUs).
MEASUREMENT_MODE = "count_windows"
MAX_AUTO_ADJUSTS = 3


@dataclass(frozen=True)
class Endpoints:
    http: str
    grpc: str
    metrics_url: str


def objectives(options: TuneOptions) -> dict[str, int]:
    return {"perf_throughput": 10} if options.objective == "throughput" else {"perf_latency_p99": 10}


def constraints(options: TuneOptions) -> dict[str, dict[str, float]]:
    limits = {"perf_latency_p99": ("max", options.constraints.max_p99_ms),
              "perf_throughput": ("min", options.constraints.min_throughput)}
    return {metric: {side: float(bound)} for metric, (side, bound) in limits.items() if bound is not None}


def perf_flags(options: TuneOptions, inputs: dict[str, object]) -> dict[str, object]:
    """The measurement window every profiled model uses, plus its input data."""
    return {"measurement-mode": MEASUREMENT_MODE, "measurement-request-count": options.measurement_requests,
            "stability-percentage": options.stability_percentage, **inputs}


def brute_parameters(space: ModelSpace, kind: str) -> dict[str, Any]:
    """Every value of every dimension: Model Analyzer measures their combinations."""
    params: dict[str, Any] = {"instance_group": [{"kind": kind, "count": list(space.instance_counts)}]}
    if space.batches:
        params["max_batch_size"] = list(space.max_batch_sizes)
        params["dynamic_batching"] = {"max_queue_delay_microseconds": list(space.delays_us),
                                      "preferred_batch_size": [list(p) for p in space.preferred_sizes]}
    return params


def quick_parameters(space: ModelSpace) -> dict[str, Any]:
    """Quick mode walks instance counts and batch sizes itself; the queue delay stays the spec's and preferred
    sizes are cleared (a preferred size above a smaller max batch size would make the variant illegal)."""
    if not space.batches:
        return {}
    return {"dynamic_batching": {"max_queue_delay_microseconds": list(space.delays_us), "preferred_batch_size": [[]]}}


def _model_entry(space: ModelSpace, options: TuneOptions, cpu_only: bool, kind: str) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    if cpu_only:
        entry["cpu_only"] = True
    params = brute_parameters(space, kind) if options.mode == "brute" else quick_parameters(space)
    if params:
        entry["model_config_parameters"] = params
    return entry


def search_section(options: TuneOptions, space: SearchSpace) -> dict[str, Any]:
    spaces = list(space.models.values())
    section: dict[str, Any] = {
        "run_config_search_mode": options.mode,
        "run_config_search_min_concurrency": space.min_concurrency,
        "run_config_search_max_concurrency": space.max_concurrency,
        "concurrency_sweep_disable": not options.concurrency_sweep,
    }
    if options.mode == "quick":
        section["run_config_search_min_instance_count"] = 1
        section["run_config_search_max_instance_count"] = max(max(s.instance_counts) for s in spaces)
        batch_tops = [max(s.max_batch_sizes) for s in spaces if s.batches]
        if batch_tops:
            section["run_config_search_min_model_batch_size"] = 1
            section["run_config_search_max_model_batch_size"] = max(batch_tops)
    return section


def remote_section(target: TuneTarget, space: SearchSpace, options: TuneOptions,
                   inputs: dict[str, object]) -> dict[str, Any]:
    """A remote server keeps its configuration (Model Analyzer cannot load variants into it): measure only that
    configuration, over doubling concurrencies. With the search on, Model Analyzer would label measurements of
    the unchanged server as other configurations."""
    levels, level = [], space.min_concurrency
    while level <= space.max_concurrency:
        levels.append(level)
        level *= 2
    return {"run_config_search_disable": True, "run_config_search_mode": "brute", "concurrency": levels,
            "perf_analyzer_flags": perf_flags(options, inputs), "profile_models": [target.name]}


def launch_section(options: TuneOptions, tune_dir: TuneDir, wrappers: Wrappers, endpoints: Endpoints,
                   docker_image: str) -> dict[str, Any]:
    section: dict[str, Any] = {
        "triton_launch_mode": options.launch,
        "triton_http_endpoint": endpoints.http,
        "triton_grpc_endpoint": endpoints.grpc,
        "triton_metrics_url": endpoints.metrics_url,
        "perf_analyzer_path": str(wrappers.perf_analyzer),
        "perf_output": True,
        "perf_output_path": str(tune_dir.perf_log),
        # perf_analyzer shares a few cores with Triton here; Model Analyzer would kill it above 80% of one core.
        "perf_analyzer_cpu_util": float(100 * (os.cpu_count() or 1)),
        # Each "not stable" retry widens the window; three retries bound the time one bad point can take.
        "perf_analyzer_max_auto_adjusts": MAX_AUTO_ADJUSTS,
    }
    if options.launch == "local":
        section["triton_server_path"] = str(wrappers.tritonserver)
        section["triton_output_path"] = str(tune_dir.server_log)
    elif options.launch == "docker":
        section["triton_docker_image"] = docker_image
        section["triton_output_path"] = str(tune_dir.server_log)
    else:  # remote: the running server keeps its configuration; Model Analyzer only measures it
        section["reload_model_disable"] = True
    return section


def build_config(target: TuneTarget, space: SearchSpace, options: TuneOptions, tune_dir: TuneDir,
                 model_repository: Path, wrappers: Wrappers, endpoints: Endpoints,
                 inputs: dict[str, object], cpu_only: dict[str, bool], kinds: dict[str, str],
                 docker_image: str) -> dict[str, Any]:
    """The whole profile config; `cpu_only`/`kinds` say per model whether it profiles on CPU and its instance kind."""
    config: dict[str, Any] = {
        "model_repository": str(model_repository),
        "output_model_repository_path": str(tune_dir.variants),
        "override_output_model_repository": True,
        "export_path": str(tune_dir.root),
        "checkpoint_directory": str(tune_dir.checkpoints),
        "collect_cpu_metrics": True,
        "objectives": objectives(options),
    }
    if constraints(options):
        config["constraints"] = constraints(options)
    config |= launch_section(options, tune_dir, wrappers, endpoints, docker_image)
    if options.launch == "remote":
        return config | remote_section(target, space, options, inputs)
    config |= search_section(options, space)
    config["perf_analyzer_flags"] = perf_flags(options, inputs)
    top = target.name
    if not target.is_pipeline:
        config["profile_models"] = {top: _model_entry(space.models[top], options, cpu_only[top], kinds[top])}
        return config
    # Model Analyzer 1.58 parses profile_models and the composing-model maps with one shared schema object, so
    # a mapping under ensemble/bls_composing_models overwrites a mapping under profile_models: the top model is
    # given by name (it is CPU-only by Model Analyzer's own detection on a host without GPU).
    config["profile_models"] = [top]
    key = "ensemble_composing_models" if target.kind == "ensemble" else "bls_composing_models"
    config[key] = {m: _model_entry(space.models[m], options, False, kinds[m]) for m in target.composing}
    cpu_models = [m for m in target.composing if cpu_only[m]]
    if cpu_models:
        config["cpu_only_composing_models"] = cpu_models
    return config
