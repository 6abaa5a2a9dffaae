"""`tritonkit validate DIR`: the same protobuf and semantic checks on any existing repository."""
from __future__ import annotations

from pathlib import Path

from tritonkit.errors import Problem, TritonkitError, shown_path
from tritonkit.model_config import pb
from tritonkit.validate.protobuf_check import parse_model_config
from tritonkit.validate.semantic import semantic_findings


def validate_repository(root: Path) -> dict[str, pb.ModelConfig]:
    """Parsed configs of every model under `root`; raises with every problem found."""
    root = Path(root)
    if not root.is_dir():
        raise TritonkitError(shown_path(root), "", "is not a directory", "pass the model repository folder")
    problems: list[Problem] = []
    configs: dict[str, pb.ModelConfig] = {}
    for model_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        config_path = model_dir / "config.pbtxt"
        shown = shown_path(config_path)
        if not config_path.is_file():
            problems.append(Problem(shown_path(model_dir), "config.pbtxt", "is missing", "add one (tritonkit runs Triton with --disable-auto-complete-config)"))
            continue
        try:
            config = parse_model_config(config_path.read_text(encoding="utf-8"), shown)
        except TritonkitError as exc:
            problems += exc.problems
            continue
        if config.name and config.name != model_dir.name:
            problems.append(Problem(shown, "name", f"'{config.name}' differs from the directory name '{model_dir.name}'", f"set name: \"{model_dir.name}\" or rename the directory"))
        config.name = config.name or model_dir.name
        problems += _check_files(model_dir, config, shown)
        configs[model_dir.name] = config
    if not configs and not problems:
        problems.append(Problem(shown_path(root), "", "contains no model directories", "build a repository first (tritonkit build)"))
    for f in semantic_findings(configs):
        problems.append(Problem(shown_path(root / f.model / "config.pbtxt"), f.field, f.problem, f.fix))
    if problems:
        raise TritonkitError.of(problems)
    return configs


def _check_files(model_dir: Path, config: pb.ModelConfig, shown: str) -> list[Problem]:
    """Version folders, the Python entry file and warmup payloads that the config refers to."""
    problems = []
    versions = [p for p in model_dir.iterdir() if p.is_dir() and p.name.isdigit()]
    if not versions:
        problems.append(Problem(shown, "version_policy", f"model '{model_dir.name}' has no version folder, so no version can load", f"create {model_dir.name}/1/ holding the model file(s)"))
    elif config.version_policy.WhichOneof("policy_choice") == "specific":
        wanted = list(config.version_policy.specific.versions)
        if not {int(v.name) for v in versions} & set(wanted):
            found = ", ".join(sorted((v.name for v in versions), key=int))
            problems.append(Problem(shown, "version_policy.specific.versions", f"none of versions {wanted} has a folder (found {found})", "list an existing version or create its folder"))
    if config.backend == "python":
        entry = config.default_model_filename or "model.py"
        for version in versions:
            if not (version / entry).is_file():
                problems.append(Problem(shown, "backend", f"version {version.name} has no {entry}", f"put the Python model in {model_dir.name}/{version.name}/{entry}"))
    for i, warmup in enumerate(config.model_warmup):
        for key, data in warmup.inputs.items():
            if data.input_data_file and not (model_dir / "warmup" / data.input_data_file).is_file():
                problems.append(Problem(shown, f"model_warmup[{i}].inputs.{key}.input_data_file", f"warmup/{data.input_data_file} not found", "put the file in the model's warmup/ folder"))
    return problems
