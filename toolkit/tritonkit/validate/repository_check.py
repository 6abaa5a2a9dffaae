"""`tritonkit validate DIR`: the same protobuf and semantic checks on any existing repository."""
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import Problem, TritonkitError, shown_path
from tritonkit.triton.config_parse import parse_model_config
from tritonkit.triton.layout import Versions, complete_backend_fields, loaded_versions, read_versions
from tritonkit.triton.model_config import pb
from tritonkit.validate.folder_reads import sibling_reads
from tritonkit.validate.model_files import DiskFolder, check_model_files
from tritonkit.validate.semantic import semantic_findings


@dataclass
class RepositoryCheck:
    """A repository that passed: configs as written (name filled in) and the warnings to show."""

    configs: dict[str, pb.ModelConfig]
    warnings: list[Problem] = field(default_factory=list)


def validate_repository(root: Path, *, self_contained: bool = True) -> dict[str, pb.ModelConfig]:
    return check_repository(root, self_contained=self_contained).configs


def check_repository(root: Path, *, self_contained: bool = True) -> RepositoryCheck:
    """Every model under `root` checked as Triton 2.51 loads it; raises with every error, returns the warnings.

    Semantic checks see each config with the backend fields Triton fills in from the folder (its file
    names, a `<name>.<backend>` folder name), which it does with auto-complete disabled too. `self_contained`
    also refuses a model that reads another model's folder (`folder_reads`), which fails from s3://; a check
    of what is served here (smoke) turns it off.
    """
    root = Path(root)
    if not root.is_dir():
        raise TritonkitError(shown_path(root), "", "is not a directory", "pass the model repository folder")
    problems: list[Problem] = []
    warnings: list[Problem] = []
    configs: dict[str, pb.ModelConfig] = {}
    completed: dict[str, pb.ModelConfig] = {}
    loaded: dict[str, list[int]] = {}
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        config_path = model_dir / "config.pbtxt"
        shown = shown_path(config_path)
        if not config_path.is_file():
            problems.append(Problem(shown_path(model_dir), "config.pbtxt", "is missing",
                                    "add one (tritonkit runs Triton with --disable-auto-complete-config)"))
            continue
        try:
            config = parse_model_config(config_path.read_text(encoding="utf-8"), shown)
        except TritonkitError as exc:
            problems += exc.problems
            continue
        if config.name and config.name != model_dir.name:
            problems.append(Problem(shown, "name",
                                    f"'{config.name}' differs from the directory name '{model_dir.name}'",
                                    f"set name: \"{model_dir.name}\" or rename the directory"))
        config.name = config.name or model_dir.name
        configs[model_dir.name] = config
        versions = read_versions(model_dir)
        first_folder = model_dir / versions.folders[0] if versions.folders else None
        completed[model_dir.name] = complete_backend_fields(model_dir.name, first_folder, config)
        loaded[model_dir.name] = loaded_versions(completed[model_dir.name], versions.found)
        errors, cautions = _check_files(model_dir, completed[model_dir.name], versions, loaded[model_dir.name], shown)
        problems += errors
        warnings += cautions
    if not configs and not problems:
        problems.append(Problem(shown_path(root), "", "contains no model directories",
                                "build a repository first (tritonkit build)"))
    findings = semantic_findings(completed, versions=loaded)
    # after the config's own findings: Triton checks the config before a backend loads files
    for name, config in completed.items():
        present = [v for v in loaded[name] if (root / name / str(v)).is_dir()]
        findings += check_model_files(name, config, DiskFolder(root / name), present)
    for f in findings:
        found = Problem(shown_path(root / f.model / "config.pbtxt"), f.field, f.problem, f.fix)
        (warnings if f.severity == "warning" else problems).append(found)
    if self_contained and not problems:
        problems += sibling_reads(root, configs)
    if problems:
        raise TritonkitError.of(problems)
    return RepositoryCheck(configs, warnings)


def _check_files(model_dir: Path, config: pb.ModelConfig, versions: Versions, loaded: list[int],
                 shown: str) -> tuple[list[Problem], list[Problem]]:
    """Errors and warnings about the version folders Triton reads and the warmup files (the files the config
    names otherwise, model files among them, are model_files.py's)."""
    problems: list[Problem] = []
    warnings: list[Problem] = []
    name = model_dir.name
    for folder in versions.leading_zero:
        warnings.append(Problem(shown, "version_policy",
                                f"Triton 2.51 ignores version folder '{folder}' (leading zero)",
                                f"rename it to '{folder.lstrip('0') or '0'}' if it is a version"))
    for folder, version in versions.loose.items():
        warnings.append(Problem(shown, "version_policy", f"Triton 2.51 reads folder '{folder}' as version {version} "
                                f"and loads that version from '{version}/'", f"rename or remove '{folder}'"))
    policy = config.version_policy
    if policy.WhichOneof("policy_choice") == "specific":
        for v in policy.specific.versions:
            if v not in versions.found:
                warnings.append(Problem(shown, "version_policy.specific.versions",
                                        f"version {v} has no folder (Triton 2.51 logs an error and loads the others)",
                                        f"create {name}/{v}/ or remove {v} from the list"))
    if not loaded:
        if not versions.found:
            problems.append(Problem(shown, "version_policy", f"model '{name}' has no version folder, so no version can "
                                    "load", f"create {name}/1/ holding the model file(s)"))
        elif policy.WhichOneof("policy_choice") == "specific":
            found = ", ".join(str(v) for v in sorted(versions.found))
            problems.append(Problem(shown, "version_policy.specific.versions",
                                    f"none of versions {list(policy.specific.versions)} has a folder (found {found})",
                                    "list an existing version or create its folder"))
        else:
            problems.append(Problem(shown, "version_policy.latest.num_versions",
                                    "is 0, so no version loads", "set num_versions: 1 or more"))
    if not (config.backend or config.platform or config.default_model_filename):
        where = f"no model file Triton knows in '{versions.folders[0]}/'" if versions.folders else "no sub-folder"
        problems.append(Problem(shown, "backend", f"neither platform nor backend is set, the folder has {where} and "
                                "its name has no '.<backend>' suffix, so Triton cannot tell the backend",
                                "set backend (e.g. python, onnxruntime) or platform"))
    for v in loaded:
        if not (model_dir / str(v)).is_dir():
            problems.append(Problem(shown, "version_policy", f"Triton loads version {v} from '{v}/', which does not "
                                    f"exist (only '{versions.found[v]}' does)",
                                    f"rename '{versions.found[v]}' to '{v}'"))
    for i, warmup in enumerate(config.model_warmup):
        for key, data in warmup.inputs.items():
            if data.input_data_file and not (model_dir / "warmup" / data.input_data_file).is_file():
                problems.append(Problem(shown, f"model_warmup[{i}].inputs.{key}.input_data_file",
                                        f"warmup/{data.input_data_file} not found",
                                        "put the file in the model's warmup/ folder"))
    return problems, warnings
