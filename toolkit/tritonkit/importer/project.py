"""`tritonkit import` as a function: a model repository -> tritonkit.yaml + models/<name>/... that builds it again.

Each config is converted field by field (see `convert.py`), loaded as a spec, rendered with the build's own
templates and compared with the original message: the import succeeds only when every model's rendered
`ModelConfig` equals the one Triton loads from the repository. Nothing is written until all models pass.
"""
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from pydantic import ValidationError

from tritonkit.errors import Problem, TritonkitError, Where
from tritonkit.files import write_text_atomically
from tritonkit.importer.convert import message_to_spec
from tritonkit.importer.source import SourceModel, read_repository
from tritonkit.importer.yaml_out import dump_spec
from tritonkit.render.model_config import render_model_config
from tritonkit.spec.loader import shown_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.pydantic_errors import problems_from_validation
from tritonkit.triton.config_parse import parse_model_config
from tritonkit.triton.model_graph import model_calls


@dataclass
class ImportedModel:
    """One model's spec fields and the files they name (project-relative path -> source in the repository)."""

    fields: dict[str, Any]
    copies: dict[str, Path] = field(default_factory=dict)


@dataclass
class ImportResult:
    """What an import wrote, and (a partial import) the models it left out with their problems."""

    spec: Path
    repository: Path
    models: list[str]
    files: list[str]
    leftovers: list[str]
    skipped: dict[str, list[Problem]] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Machine-readable form for --json."""
        return {"spec": str(self.spec), "repository": str(self.repository), "models": self.models,
                "files": self.files, "not_imported": self.leftovers,
                "skipped_models": {name: [p.line() for p in found] for name, found in self.skipped.items()}}


def import_repository(repository: Path, spec_path: Path, partial: bool = False) -> ImportResult:
    """Converts, checks and writes; raises one TritonkitError listing every problem, having written nothing.

    `partial` imports the models the spec can express and leaves out the others, and every model that calls
    one of them (an ensemble step, a declared BLS call), each with its problems in `ImportResult.skipped`.
    """
    repository, spec_path = repository.absolute(), spec_path.absolute()
    root = spec_path.parent
    if repository == root / "model_repository":
        raise TritonkitError(shown_path(spec_path), "", f"`tritonkit build` writes {shown_path(repository)} next to "
                             "this spec and would replace the repository being imported",
                             "import into another folder, e.g. -o imported/tritonkit.yaml")
    sources, skipped = read_repository(repository, keep_going=partial)
    problems: list[Problem] = []
    imported: dict[str, ImportedModel] = {}
    for name, source in sources.items():
        model, found = import_model(source)
        if found and partial:
            skipped[name] = found
        else:
            problems += found
            imported[name] = model
    _skip_callers(sources, imported, skipped)
    if partial and not imported:
        raise TritonkitError.of([p for found in skipped.values() for p in found])
    problems += _clobbered(root, spec_path, sorted(imported))
    if problems:
        raise TritonkitError.of(problems)
    copies = {rel: src for model in imported.values() for rel, src in model.copies.items()}
    text = dump_spec({name: m.fields for name, m in imported.items()}, shown_path(repository))
    _write(root, spec_path, copies, text)
    leftovers = [f"{name}/{rel}" for name, s in sources.items() if name in imported for rel in s.leftovers]
    return ImportResult(spec_path, repository, sorted(imported), sorted(copies), leftovers,
                        dict(sorted(skipped.items())))


def _skip_callers(sources: dict[str, SourceModel], imported: dict[str, ImportedModel],
                  skipped: dict[str, list[Problem]]) -> None:
    """Moves every imported model that calls a skipped one (transitively) to `skipped`: its build would fail."""
    changed = True
    while changed:
        changed = False
        for name in list(imported):
            callee = next((m for m in model_calls(sources[name].config) if m in skipped), None)
            if callee is not None:
                shown = shown_path(sources[name].folder / "config.pbtxt")
                skipped[name] = [Problem(shown, "", f"calls model '{callee}', which is not imported",
                                         f"fix '{callee}' to import both")]
                del imported[name]
                changed = True


def import_model(source: SourceModel) -> tuple[ImportedModel, list[Problem]]:
    """The spec fields of one model, checked by rendering them and comparing with the original message."""
    shown = shown_path(source.folder / "config.pbtxt")
    model, outside = ImportedModel({}), list[Problem]()

    def data_file(folder: str, name: str) -> str:
        inside = f"{folder}/{name}" if folder else name
        rel = f"models/{source.name}/{inside}"
        if PurePosixPath(inside).is_absolute() or ".." in PurePosixPath(inside).parts:
            outside.append(Problem(shown, "", f"'{name}' names a file outside the model folder",
                                   "put the file in the model folder and name it from there"))
        else:
            model.copies[rel] = source.folder / inside
        return rel

    model.fields, problems = message_to_spec(source.config, ModelSpec, Where(shown), data_file, frozenset({"name"}))
    problems += outside
    model.fields.update(_version_files(source, model.copies))
    if problems:
        return model, problems
    try:
        spec = ModelSpec.model_validate(model.fields)
    except ValidationError as exc:
        return model, problems_from_validation(exc, shown)
    rendered = parse_model_config(render_model_config(source.name, spec, "tritonkit import"), shown)
    differs = first_difference(source.config, rendered)
    if differs is not None:
        return model, [Problem(shown, differs, "tritonkit.yaml cannot reproduce this setting exactly "
                               "(its build writes it differently)", "write the value out in config.pbtxt the way "
                               "Triton reads it, or keep serving this model from a hand-written repository")]
    return model, []


def _version_files(source: SourceModel, copies: dict[str, Path]) -> dict[str, Any]:
    """`versions`, `files` (entries every version holds identically) and `version_files` (the rest)."""
    versions = sorted(source.versions)
    files: dict[str, str] = {}
    own: dict[int, dict[str, str]] = {}
    for entry in sorted(set().union(*source.versions.values())):
        holders = [v for v in versions if entry in source.versions[v]]
        shared = holders == versions and len({source.versions[v][entry] for v in versions}) == 1
        for v in holders[:1] if shared else holders:
            rel = f"models/{source.name}/{v}/{entry}"
            copies[rel] = source.folder / str(v) / entry
            if shared:
                files[entry] = rel
            else:
                own.setdefault(v, {})[entry] = rel
    out: dict[str, Any] = {"versions": versions} if versions != [1] else {}
    return out | ({"files": files} if files else {}) | ({"version_files": own} if own else {})


def first_difference(a: Message, b: Message, path: str = "") -> str | None:
    """Dotted path of the first field where two messages of one type differ, or None when they are equal."""
    for fd in a.DESCRIPTOR.fields:
        where = f"{path}.{fd.name}" if path else fd.name
        va, vb = getattr(a, fd.name), getattr(b, fd.name)
        message = fd.type == FieldDescriptor.TYPE_MESSAGE
        if message and fd.label != FieldDescriptor.LABEL_REPEATED:
            if a.HasField(fd.name) != b.HasField(fd.name):
                return where
            found = first_difference(va, vb, where) if a.HasField(fd.name) else None
        elif message and not fd.message_type.GetOptions().map_entry and len(va) == len(vb):
            pairs = enumerate(zip(va, vb))
            found = next((d for i, (x, y) in pairs if (d := first_difference(x, y, f"{where}[{i}]"))), None)
        else:
            plain_a, plain_b = (dict(v) if hasattr(v, "items") else v for v in (va, vb))
            found = where if plain_a != plain_b else None
        if found is not None:
            return found
    return None if a == b else path or "(message)"


def _clobbered(root: Path, spec_path: Path, names: list[str]) -> list[Problem]:
    """Existing files the import would overwrite."""
    taken = [spec_path, *(root / "models" / n for n in names)]
    fix = "import into an empty folder (-o new/tritonkit.yaml) or remove it first"
    return [Problem(shown_path(p), "", "already exists", fix) for p in taken if p.exists()]


def _write(root: Path, spec_path: Path, copies: dict[str, Path], text: str) -> None:
    """Copies the model files via a staging folder next to them, then writes the spec last."""
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tritonkit-import-", dir=root))
    try:
        for rel, src in copies.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy2(src, dest)
        if (staging / "models").is_dir():
            (root / "models").mkdir(exist_ok=True)
            for model_dir in sorted((staging / "models").iterdir()):
                model_dir.rename(root / "models" / model_dir.name)
        write_text_atomically(spec_path, text)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
