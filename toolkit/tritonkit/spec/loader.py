"""Loads `tritonkit.yaml` and the pipeline files it includes into one validated Project."""
from pathlib import Path

from pydantic import ValidationError

from tritonkit.errors import Problem, TritonkitError, Where, shown_path
from tritonkit.package_files import resolve_spec_path
from tritonkit.spec.limits import apply_limits
from tritonkit.spec.model_sources import copied_parameters, reference_problems
from tritonkit.spec.paths import escaping_paths, outside_problem
from tritonkit.spec.project import PipelineFile, Project, ProjectFile
from tritonkit.spec.pydantic_errors import problems_from_validation
from tritonkit.spec.schema import spec_schema
from tritonkit.spec.sections import moved_fields
from tritonkit.spec.smoke import SmokeCase
from tritonkit.spec.tuned import apply_tuned
from tritonkit.spec.yaml_source import read_yaml_mapping
from tritonkit.triton.layout import NAME_FIX, unsafe_name_reason

#: how many files deep includes may nest: far beyond any real pipeline, well within Python's recursion limit
MAX_INCLUDE_DEPTH = 64


def _parse(path: Path, schema: type[PipelineFile], warnings: list[Problem]) -> PipelineFile:
    shown = shown_path(path)
    data = read_yaml_mapping(path, shown)
    warnings += moved_fields(data, shown)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise TritonkitError.of(problems_from_validation(exc, shown)) from None


def load_project(spec_path: Path) -> Project:
    """Parses the spec and its includes; every model is checked against the schema."""
    spec_path = Path(spec_path).absolute()
    warnings: list[Problem] = []
    top = _parse(spec_path, spec_schema().project_file, warnings)
    assert isinstance(top, ProjectFile)
    project = Project(spec_path=spec_path, deploy=top.deploy, gateway=top.gateway, warnings=warnings)
    problems: list[Problem] = []
    _merge(project, top, spec_path, chain=[spec_path.resolve()], problems=problems)
    for name, model in project.models.items():
        origin = project.origin(name)
        problems += escaping_paths(model, origin.parent, project.root, shown_path(origin), f"models.{name}")
    for name, tuned in top.tuned.items():
        if name not in project.models:
            problems.append(Problem(shown_path(spec_path), f"tuned.{name}", "tuned settings for unknown model "
                                    f"'{name}'", "remove the entry or re-run tritonkit tune"))
        else:
            project.models[name] = apply_tuned(project.models[name], tuned)
    project.models = {name: apply_limits(model, top.deploy.limits) for name, model in project.models.items()}
    shown = {name: shown_path(project.origin(name)) for name in project.models}
    problems += reference_problems(project.models, shown)
    project.models, parameter_problems = copied_parameters(project.models, shown)
    problems += parameter_problems
    problems += _added_smoke(project, top.smoke)
    problems += _load_models_problems(project, shown_path(spec_path))
    if not project.models and not problems:
        problems.append(Problem(shown_path(spec_path), "models", "no models are defined",
                                "add models: (or include: a pipeline file that defines some)"))
    if problems:
        raise TritonkitError.of(problems)
    return project


def _added_smoke(project: Project, added: dict[str, list[SmokeCase]]) -> list[Problem]:
    """Takes the project file's `smoke:` cases for known models; every tensor file of every case stays in bounds."""
    shown = shown_path(project.spec_path)
    problems = [Problem(shown, f"smoke.{name}", f"unknown model '{name}'", "name a model of the spec "
                        f"({', '.join(project.models) or 'none'})")
                for name in added if name not in project.models]
    project.added_smoke = {name: cases for name, cases in added.items() if name in project.models}
    for name in project.models:
        for source in project.smoke_cases(name):
            for i, case in enumerate(source.cases):
                for written in case.files():
                    target = resolve_spec_path(written, source.file.parent)
                    if outside := outside_problem(shown_path(source.file), f"{source.field}[{i}]",
                                                  written, target, project.root):
                        problems.append(outside)
    return problems


def _load_models_problems(project: Project, shown: str) -> list[Problem]:
    """`deploy.load_models` names models of the spec, and only explicit model control reads it."""
    names = project.deploy.load_models
    if names is None:
        return []
    if project.deploy.model_control_mode != "explicit":
        return [Problem(shown, "deploy.load_models", "only explicit model control loads a chosen set of models at "
                        f"startup (model_control_mode is {project.deploy.model_control_mode})",
                        "set deploy.model_control_mode: explicit, or remove load_models")]
    return [Problem(shown, f"deploy.load_models[{i}]", f"unknown model '{name}'",
                    "name a model of the spec (its ensemble steps and BLS callees are added by the build)")
            for i, name in enumerate(names) if name not in project.models]


def _merge(project: Project, part: PipelineFile, path: Path, chain: list[Path], problems: list[Problem]) -> None:
    """Adds `part`'s models, then those of its includes (depth first, cycles refused)."""
    shown = shown_path(path)
    for name, model in part.models.items():
        reason = unsafe_name_reason(name)
        if reason:  # names become folder names (exports, repository): refuse them before any path is built
            problems.append(Problem(shown, f"models.{name}", f"model name {name!r} {reason}", NAME_FIX))
            continue
        if name in project.models:
            first = shown_path(project.origin(name))
            problems.append(Problem(shown, f"models.{name}", f"model '{name}' is already defined in {first}",
                                    "rename one of them or remove the duplicate"))
            continue
        project.models[name] = model
        project.origins[name] = path
    for index, rel in enumerate(part.include):
        where = Where(shown, f"include[{index}]")
        target = resolve_spec_path(rel, path.parent).absolute()
        outside = outside_problem(shown, where.field, rel, target, project.root)
        if outside:
            problems.append(outside)
            continue
        if target.resolve() in chain:
            loop = " -> ".join(shown_path(c) for c in chain[chain.index(target.resolve()):] + [target.resolve()])
            problems.append(Problem.at(where, f"'{rel}' closes an include cycle ({loop})",
                                       "remove the circular include"))
            continue
        if len(chain) >= MAX_INCLUDE_DEPTH:
            problems.append(Problem.at(where, f"includes nest more than {MAX_INCLUDE_DEPTH} files deep (from "
                                       f"{shown_path(chain[0])})", "include the pipeline files from fewer levels"))
            continue
        try:
            found = target.is_file()
        except OSError as exc:   # a name too long for the file system, a symlink loop
            problems.append(Problem.at(where, f"cannot read '{rel}' ({exc.strerror})", "fix the path"))
            continue
        if not found:
            problems.append(Problem.at(where, f"included file '{rel}' not found", "fix the path (relative to this "
                                       "file, or tritonkit:ensembles/<name>.yaml for a shipped pipeline)"))
            continue
        part = _parse(target, spec_schema().pipeline_file, project.warnings)
        _merge(project, part, target, chain + [target.resolve()], problems)
