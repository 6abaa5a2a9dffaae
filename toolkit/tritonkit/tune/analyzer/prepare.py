"""Everything before Model Analyzer runs: target, baseline build, search space, serving copy, wrappers, config.

`--dry-run` stops here: the config and the command are written into the tuning directory and printed, and
nothing is measured or written to the spec.
"""
import contextlib
import importlib.util
import json
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from tritonkit.errors import TritonkitError
from tritonkit.extras import install_extra
from tritonkit.serve.background import running_state
from tritonkit.serve.fallback import gpu_available
from tritonkit.serve.ports import choose_ports
from tritonkit.serve.runtime import prepare_runtime
from tritonkit.serve.serving import build_serving_repository
from tritonkit.serve.state import STATE_DIR
from tritonkit.spec.loader import load_project, shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project
from tritonkit.tune.analyzer.config import Endpoints, build_config
from tritonkit.tune.analyzer.runner import analyzer_command
from tritonkit.tune.analyzer.space import ModelSpace, SearchSpace, concurrency_range, fit_budget, model_space
from tritonkit.tune.analyzer.wrappers import Wrappers, write_wrappers
from tritonkit.tune.baseline import build_baseline
from tritonkit.tune.layout import TuneDir
from tritonkit.tune.options import TuneOptions
from tritonkit.tune.targets.inputs import perf_inputs
from tritonkit.tune.targets.model import TuneTarget, resolve_target


@dataclass
class TunePlan:
    """A prepared run: what is tuned, against what, with which Model Analyzer config."""

    options: TuneOptions
    project: Project  # the untuned spec (the user's own settings)
    target: TuneTarget
    tune_dir: TuneDir
    config: dict[str, Any]
    command: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def specs(self) -> dict[str, ModelSpec]:
        return self.project.models

    def summary(self) -> dict[str, Any]:
        """`--dry-run --json`: the config and the command, nothing measured."""
        return {"ok": True, "dry_run": True, "config": self.config, "command": self.command,
                "config_file": str(self.tune_dir.config), "notes": self.notes}


def _cpu_only(spec: ModelSpec, gpu: bool) -> bool:
    """Profile on CPU when the host has no GPU, or when the spec asks for CPU instances only."""
    return not gpu or (bool(spec.instance_group) and all(g.kind == "KIND_CPU" for g in spec.instance_group))


def _space(plan_target: TuneTarget, specs: dict[str, ModelSpec], options: TuneOptions, mode: str, gpu: bool,
           notes: list[str]) -> SearchSpace:
    spaces: dict[str, ModelSpace] = {}
    for name in plan_target.models:
        spec = specs[name]
        if plan_target.kind == "ensemble" and name == plan_target.name:
            spaces[name] = ModelSpace(name, (1,))  # the ensemble itself has no instances or batching to search
            continue
        space = model_space(name, spec, mode, gpu, options.max_instances, options.max_batch_size)
        if mode == "brute":
            space, note = fit_budget(space, options.budget_minutes)
            if note:
                notes.append(note)
        spaces[name] = space
    searched = [s for n, s in spaces.items() if not (plan_target.kind == "ensemble" and n == plan_target.name)]
    low, high = concurrency_range(searched)
    return SearchSpace(spaces, low, high)


def _stable_ports(tune_dir: TuneDir) -> dict[str, int]:
    """The ports of the previous run when they are free: Model Analyzer keys its checkpointed measurements by
    the perf_analyzer command line, which contains the metrics URL, so new ports would void a resume."""
    saved: dict[str, int | None] = {"http": None, "grpc": None, "metrics": None}
    with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):  # none saved, or not readable
        saved |= {k: int(v) for k, v in json.loads(tune_dir.ports.read_text()).items() if k in saved}
    try:
        ports = choose_ports("127.0.0.1", saved)
    except TritonkitError:  # taken meanwhile: fresh ports (the checkpoint's measurements will be redone)
        ports = choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None})
    tune_dir.ports.write_text(json.dumps(ports))
    return ports


def _endpoints(options: TuneOptions, tune_dir: TuneDir, project_root: Path) -> Endpoints:
    if options.launch == "remote":
        state = running_state(project_root / STATE_DIR)
        if state is None:
            raise TritonkitError("", "--launch", "no running server found for remote launch (--launch remote)",
                                 "start one first: tritonkit serve --background (then tune with --launch remote)")
        return Endpoints(f"{state.host}:{state.http_port}", f"{state.host}:{state.grpc_port}",
                         f"http://{state.host}:{state.metrics_port}/metrics")
    ports = _stable_ports(tune_dir)
    return Endpoints(f"127.0.0.1:{ports['http']}", f"127.0.0.1:{ports['grpc']}",
                     f"http://127.0.0.1:{ports['metrics']}/metrics")


def _check_docker(options: TuneOptions) -> None:
    engine = shutil.which("docker") and Path("/var/run/docker.sock").exists()
    if options.launch == "docker" and not options.dry_run and not engine:
        raise TritonkitError("", "--launch", "--launch docker needs a Docker engine and none is reachable here",
                             "use --launch local (the embedded Triton), or run on a host with Docker")


#: Import name -> distribution of what `tritonkit tune` needs beyond tritonkit's own dependencies.
REQUIRED = {"model_analyzer": "triton-model-analyzer==1.58.0", "ruamel.yaml": "ruamel.yaml", "matplotlib": "matplotlib"}


def check_installed() -> None:
    """One line naming what is missing, instead of an ImportError halfway through a run."""
    missing = [dist for module, dist in REQUIRED.items() if importlib.util.find_spec(module.split(".")[0]) is None
               or (module == "ruamel.yaml" and importlib.util.find_spec(module) is None)]
    if missing:
        raise TritonkitError("tritonkit tune", "", f"missing {', '.join(missing)}", install_extra("tune"))


def prepare(options: TuneOptions) -> TunePlan:
    """Resolves, builds and writes everything Model Analyzer needs; raises one-line errors on the way."""
    check_installed()
    user_project = load_project(options.spec_path)
    target = resolve_target(user_project, options.target)
    notes: list[str] = []
    mode = options.mode
    if target.is_pipeline and mode == "brute":
        notes.append(f"'{target.name}' is a {target.kind} pipeline: "
                     "Model Analyzer profiles pipelines in quick mode only")
        mode = "quick"
    _check_docker(options)
    tune_dir = TuneDir.for_target(user_project.root, target.name)
    tune_dir.make()
    project = build_baseline(options.spec_path, tune_dir, target.models)
    gpu = gpu_available()
    space = _space(target, project.models, options, mode, gpu, notes)
    repository = tune_dir.built
    if options.launch == "local":
        serving = build_serving_repository(tune_dir.built, tune_dir.root)
        repository = serving.path
        notes += [fb.describe() + "; its tuned settings map back to the spec model" for fb in serving.fallbacks]
    wrappers: Wrappers = write_wrappers(prepare_runtime(), tune_dir.bin, tune_dir.pids)
    inputs = perf_inputs(target.name, project.models[target.name], tune_dir.built / target.name, tune_dir.root)
    if inputs.note:
        notes.append(inputs.note)
    cpu_only = {m: _cpu_only(project.models[m], gpu) for m in target.models}
    kinds = {m: "KIND_CPU" if cpu_only[m] else "KIND_GPU" for m in target.models}
    effective = replace(options, mode=mode)
    config = build_config(target, space, effective, tune_dir, repository, wrappers,
                          _endpoints(options, tune_dir, user_project.root), inputs.flags, cpu_only, kinds,
                          project.deploy.image)
    header = (f"# Model Analyzer profile config generated by `tritonkit tune {target.name}` from "
              f"{shown_path(options.spec_path)}; regenerated on every run.\n")
    tune_dir.config.write_text(header + yaml.safe_dump(config, sort_keys=False, width=4096))
    return TunePlan(effective, project, target, tune_dir, config, analyzer_command(tune_dir.config), notes)

