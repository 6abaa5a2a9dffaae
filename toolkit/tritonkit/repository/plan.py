"""Turns a loaded spec into a checked plan of files to write: rendered configs plus copied model files."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tritonclient.grpc import model_config_pb2 as pb

from tritonkit.errors import Problem, TritonkitError
from tritonkit.export.api import ExportResult
from tritonkit.golden import GoldenCase
from tritonkit.package_files import resolve_spec_path
from tritonkit.render.model_config import render_model_config
from tritonkit.repository.exports import golden_copies
from tritonkit.repository.smoke_cases import golden_from_spec
from tritonkit.spec.loader import shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project
from tritonkit.validate.protobuf_check import parse_model_config
from tritonkit.validate.semantic import semantic_findings


@dataclass
class ModelPlan:
    """Everything one model directory will contain."""

    name: str
    config_text: str
    config: pb.ModelConfig
    copies: dict[str, Path] = field(default_factory=dict)  # path inside the model dir -> source file
    golden: list[GoldenCase] = field(default_factory=list)  # written to <model>/golden/


@dataclass
class BuildPlan:
    """The whole repository to write; nothing is written until every check has passed."""

    project: Project
    models: dict[str, ModelPlan] = field(default_factory=dict)
    exports: dict[str, ExportResult] = field(default_factory=dict)

    def files(self) -> list[str]:
        """Relative paths the repository will contain, for --dry-run and --json."""
        out = ["README.md"]
        for name, model in self.models.items():
            out.append(f"{name}/config.pbtxt")
            out += [f"{name}/{rel}" for rel in sorted(model.copies)]
            out += [f"{name}/golden/{case.name}.npz" for case in model.golden]
            out += [f"{name}/{v}/" for v in self.project.models[name].versions]
        return sorted(set(out))


def make_plan(project: Project, exports: dict[str, ExportResult] | None = None) -> BuildPlan:
    """Renders and checks every model; raises one TritonkitError listing every problem found."""
    plan = BuildPlan(project, exports=exports or {})
    problems: list[Problem] = []
    for name, spec in project.models.items():
        shown = shown_path(project.origin(name))
        text = render_model_config(name, spec, project.origin_label(name))
        try:
            config = parse_model_config(text, shown, f"models.{name}.")
        except TritonkitError as exc:
            problems += exc.problems
            continue
        model = ModelPlan(name, text, config)
        problems += _collect_copies(model, spec, project.origin(name), shown)
        if name in plan.exports:
            model.copies.update(golden_copies(plan.exports[name]))
        model.golden, golden_problems = golden_from_spec(name, config, spec.smoke, shown)
        problems += golden_problems
        plan.models[name] = model
    for finding in semantic_findings({n: m.config for n, m in plan.models.items()}):
        shown = shown_path(project.origin(finding.model))
        path = f"models.{finding.model}" + ("" if finding.field == "name" else f".{finding.field}")
        problems.append(Problem(shown, path, finding.problem, finding.fix))
    if problems:
        raise TritonkitError.of(problems)
    return plan


def _collect_copies(model: ModelPlan, spec: ModelSpec, origin: Path, shown: str) -> list[Problem]:
    """Resolves every file the model directory needs, relative to the spec file that defines it."""
    problems: list[Problem] = []
    base = origin.parent
    prefix = f"models.{model.name}"

    def add(field_path: str, rel_dest: str, source: str) -> None:
        src = resolve_spec_path(source, base)
        dest = PurePosixPath(rel_dest)
        if dest.is_absolute() or ".." in dest.parts or not dest.parts:
            problems.append(Problem(shown, field_path, f"destination '{rel_dest}' leaves the model directory", "use a plain file name such as model.py"))
        elif src.is_dir():
            for path in sorted(p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                model.copies[str(dest / path.relative_to(src).as_posix())] = path
        elif not src.is_file():
            problems.append(Problem(shown, field_path, f"file '{source}' not found (looked in {shown_path(src)})", f"fix the path (relative to {shown})"))
        else:
            model.copies[str(dest)] = src

    for version in spec.versions:
        for dest, source in spec.files.items():
            add(f"{prefix}.files.{dest}", f"{version}/{dest}", source)
    for i, warmup in enumerate(spec.model_warmup):
        for key, data in warmup.inputs.items():
            if data.input_data_file:
                add(f"{prefix}.model_warmup[{i}].inputs.{key}.input_data_file", f"warmup/{PurePosixPath(data.input_data_file).name}", data.input_data_file)
    if spec.sequence_batching is not None:
        for i, state in enumerate(spec.sequence_batching.state):
            for j, init in enumerate(state.initial_state):
                if init.data_file:
                    add(f"{prefix}.sequence_batching.state[{i}].initial_state[{j}].data_file", f"initial_state/{PurePosixPath(init.data_file).name}", init.data_file)
    if spec.backend == "python":
        entry = spec.default_model_filename or "model.py"
        if entry not in spec.files:
            problems.append(Problem(shown, f"{prefix}.files", f"Python backend model has no '{entry}' among its files", f"add files: {{{entry}: path/to/{entry}}}"))
    return problems
