"""Turns a loaded spec into a checked plan of files to write: rendered configs plus copied model files."""
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tritonkit.errors import Problem, TritonkitError
from tritonkit.export.api import ExportResult
from tritonkit.golden import GoldenCase
from tritonkit.package_files import resolve_spec_path
from tritonkit.render.model_config import render_model_config
from tritonkit.repository.smoke_cases import golden_from_spec
from tritonkit.spec.loader import shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.model_sources import model_file
from tritonkit.spec.paths import copied_files, outside_problem
from tritonkit.spec.project import Project
from tritonkit.triton.config_parse import parse_model_config
from tritonkit.triton.layout import complete_backend_fields, loaded_versions
from tritonkit.triton.model_config import pb
from tritonkit.validate.model_files import PlannedFolder, check_model_files
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
    #: Models whose export a dry run skipped: their spec's own copies; config and model files come from the export.
    pending: dict[str, dict[str, Path]] = field(default_factory=dict)
    #: Findings where tritonkit is stricter than Triton: shown, but they do not stop the build.
    warnings: list[Problem] = field(default_factory=list)

    def files(self) -> list[str]:
        """Relative paths the repository will contain, for --dry-run and --json."""
        out = ["README.md"]
        copies = {**{n: m.copies for n, m in self.models.items()}, **self.pending}
        for name, model_copies in copies.items():
            out.append(f"{name}/config.pbtxt")
            out += [f"{name}/{rel}" for rel in sorted(model_copies)]
            out += [f"{name}/{v}/" for v in self.project.models[name].versions]
        for name, model in self.models.items():
            out += [f"{name}/golden/{case.name}.npz" for case in model.golden]
        return sorted(set(out))


def make_plan(project: Project, exports: dict[str, ExportResult] | None = None,
              pending: frozenset[str] = frozenset()) -> BuildPlan:
    """Renders and checks every model; raises one TritonkitError listing every problem found.

    `pending` names exported models whose export has not run (a dry run): their configs come from the
    exported graphs, so only their own files are checked and ensembles calling them are taken on trust.
    """
    plan = BuildPlan(project, exports=exports or {}, warnings=list(project.warnings))
    problems: list[Problem] = []
    unparsed: set[str] = set()   # their own problem is reported; models that call them are not blamed again
    for name, spec in project.models.items():
        origin = project.origin(name)
        shown = shown_path(origin)
        if name in pending:
            plan.pending[name], copy_problems = _collect_copies(name, spec, origin, project.root, shown)
            problems += copy_problems
            continue
        text = render_model_config(name, spec, project.origin_label(name))
        try:
            config = parse_model_config(text, shown, f"models.{name}.")
        except TritonkitError as exc:
            problems += exc.problems
            unparsed.add(name)
            continue
        model = ModelPlan(name, text, config)
        model.copies, copy_problems = _collect_copies(name, spec, origin, project.root, shown)
        problems += copy_problems
        if name in plan.exports:  # the export's golden samples
            model.copies.update({f"golden/{p.name}": p for p in plan.exports[name].golden_files})
        model.golden, golden_problems = golden_from_spec(name, config, project.smoke_cases(name))
        problems += golden_problems
        plan.models[name] = model
    versions = {n: loaded_versions(m.config, project.models[n].versions) for n, m in plan.models.items()}
    findings = semantic_findings({n: m.config for n, m in plan.models.items()}, pending | unparsed, versions)
    for n, m in plan.models.items():
        folder = PlannedFolder(m.copies, _made_later(plan, n))
        config = complete_backend_fields(n, None, m.config)
        findings += check_model_files(n, config, folder, versions[n], from_spec=True)
    for finding in findings:
        shown = shown_path(project.origin(finding.model))
        path = f"models.{finding.model}" + ("" if finding.field == "name" else f".{finding.field}")
        found = Problem(shown, path, finding.problem, finding.fix)
        (plan.warnings if finding.severity == "warning" else problems).append(found)
    if problems:
        raise TritonkitError.of(problems)
    return plan


def _made_later(plan: BuildPlan, name: str) -> frozenset[str]:
    """Files of a model folder that a later step makes: a dry run's `model:<other>/<file>` copies and the engines
    of deferred TensorRT exports (built by the compose file's tensorrt-engines service)."""
    spec = plan.project.models[name]
    made = {rel for _, rel, source in copied_files(spec) if model_file(source)}
    trt = plan.exports[name].tensorrt if name in plan.exports else None
    if trt and trt.get("mode") == "deferred":
        made |= {f"{v}/{trt['engine']}" for v in spec.versions}
    return frozenset(made)


def _collect_copies(name: str, spec: ModelSpec, origin: Path, root: Path,
                    shown: str) -> tuple[dict[str, Path], list[Problem]]:
    """Resolves every file the model directory needs, relative to the spec file that defines it.

    The loader has refused sources outside the project and the package; a folder source is checked
    again file by file, since a symlink inside it may lead anywhere.
    """
    copies: dict[str, Path] = {}
    problems: list[Problem] = []
    prefix = f"models.{name}"
    entry = spec.default_model_filename or "model.py"
    for field_path, rel_dest, source in copied_files(spec):
        if model_file(source):   # a dry run: the other model's build has not run (a build resolves each first)
            continue
        src = resolve_spec_path(source, origin.parent)
        dest = PurePosixPath(rel_dest)
        where = f"{prefix}.{field_path}"
        try:
            is_dir, is_file = src.is_dir(), src.is_file()
        except OSError as exc:   # a name too long for the file system, a symlink loop
            problems.append(Problem(shown, where, f"cannot read '{source}' ({exc.strerror})",
                                    f"fix the path (relative to {shown})"))
            continue
        if dest.is_absolute() or ".." in dest.parts or not dest.parts:
            problems.append(Problem(shown, where, f"destination '{rel_dest}' leaves the model directory",
                                    "use a plain file name such as model.py"))
        elif is_dir and spec.backend == "python" and dest.parts[1:] == (entry,):
            problems.append(Problem(shown, where, f"'{source}' is a folder, "
                                    f"but the Python backend loads {entry} as a file",
                                    f"point {entry} at the model's Python file "
                                    f"(a folder can go in under another name, e.g. lib: {source})"))
        elif is_dir:
            for path in sorted(p for p in src.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
                rel = path.relative_to(src).as_posix()
                outside = outside_problem(shown, where, f"{source}/{rel}", path, root)
                if outside:
                    problems.append(outside)
                else:
                    copies[str(dest / rel)] = path
        elif not is_file:
            problems.append(Problem(shown, where, f"file '{source}' not found (looked in {shown_path(src)})",
                                    f"fix the path (relative to {shown})"))
        else:
            copies[str(dest)] = src
    if spec.backend == "python" and any(entry not in spec.files_of(v) for v in spec.versions):
        problems.append(Problem(shown, f"{prefix}.files", f"Python backend model has no '{entry}' among its files",
                                f"add files: {{{entry}: path/to/{entry}}}"))
    return copies, problems
