"""Reads an existing model repository for import: configs as Triton loads them, version files, leftovers."""
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import Problem, TritonkitError, shown_path
from tritonkit.triton.config_parse import parse_model_config
from tritonkit.triton.layout import model_dirs, version_dirs
from tritonkit.triton.model_config import pb
from tritonkit.validate.repository_check import validate_repository

#: Model sub-folders whose files the config names (warmup inputs, initial states); imported through the config.
DATA_FOLDERS = ("warmup", "initial_state")


@dataclass
class SourceModel:
    """One model folder of the repository being imported."""

    name: str
    folder: Path
    config: pb.ModelConfig  # as Triton loads it (see `as_triton_loads`)
    versions: dict[int, dict[str, str]] = field(default_factory=dict)  # version -> {top-level entry: content digest}
    leftovers: list[str] = field(default_factory=list)  # files in the model folder that no spec field carries


def read_repository(root: Path, keep_going: bool = False) -> tuple[dict[str, SourceModel], dict[str, list[Problem]]]:
    """Every model of `root`, checked the way `tritonkit validate` checks it (a missing config.pbtxt is an error),
    and no refusals; raises with every problem. With `keep_going`, models with problems are left out instead
    and returned as {model: its problems}; only a problem of the repository as a whole still raises."""
    refused: dict[str, list[Problem]] = {}
    try:
        configs = validate_repository(root)
    except TritonkitError as exc:
        if not keep_going:
            raise
        configs, refused = _valid_models(root, exc.problems)
    models = {}
    for name, config in configs.items():
        model = models[name] = SourceModel(name, root / name, as_triton_loads(config, name))
        for v in version_dirs(model.folder):
            model.versions[int(v.name)] = {p.name: _digest(p) for p in sorted(v.iterdir()) if _is_content(p)}
        model.leftovers = _leftovers(model.folder, model.config)
    return models, refused


def _valid_models(root: Path, problems: list[Problem]) -> tuple[dict[str, pb.ModelConfig], dict[str, list[Problem]]]:
    """The configs of the models no problem names, and the problems by model; raises when a problem names no model."""
    shown = {p.name: shown_path(p) for p in model_dirs(root)}
    refused: dict[str, list[Problem]] = {}
    for problem in problems:
        owner = next((n for n, s in shown.items() if problem.file == s or problem.file.startswith(s + os.sep)), None)
        if owner is None:
            raise TritonkitError.of(problems)
        refused.setdefault(owner, []).append(problem)
    files = {name: root / name / "config.pbtxt" for name in shown if name not in refused}
    return {n: parse_model_config(f.read_text(encoding="utf-8"), shown_path(f)) for n, f in files.items()}, refused


def as_triton_loads(config: pb.ModelConfig, folder_name: str) -> pb.ModelConfig:
    """`config` with the defaults Triton fills in at load time where the spec always writes the value.

    A config without `name` gets its folder's name; a warmup sample without `count` runs once (Triton reads 0 as 1),
    which the spec writes as `count: 1`. An instance group without `count` keeps it unset: the spec leaves it out too,
    and Triton runs its backend's default (2 on CPU for onnxruntime and tensorflow, else 1). Nothing else is changed.
    """
    loaded = pb.ModelConfig()
    loaded.CopyFrom(config)
    loaded.name = loaded.name or folder_name
    for warmup in loaded.model_warmup:
        warmup.count = warmup.count or 1
    return loaded


def _is_content(path: Path) -> bool:
    """Model files, not VCS placeholders (`.gitkeep`) or Python caches."""
    return not path.name.startswith(".") and path.name != "__pycache__"


def _digest(path: Path) -> str:
    """Content hash of a file or a whole folder, to tell whether versions share a file."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else (p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    for f in sorted(files):
        if f != path:
            h.update(f.relative_to(path).as_posix().encode() + b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def _leftovers(folder: Path, config: pb.ModelConfig) -> list[str]:
    """Files of the model folder outside its version folders that the config does not name as data or label files."""
    named = {f"warmup/{d.input_data_file}" for w in config.model_warmup for d in w.inputs.values()}
    named |= {f"initial_state/{i.data_file}" for s in config.sequence_batching.state for i in s.initial_state}
    named |= {"config.pbtxt", *(output.label_filename for output in config.output)}
    files = sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
    return [rel.as_posix() for rel in files if rel.as_posix() not in named and not rel.parts[0].isdigit()
            and all(_is_content(Path(p)) for p in rel.parts)]
