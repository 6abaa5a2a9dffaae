"""Resolves `files:` sources `model:<other>/<file>` to the file the other model's build put in its version folder.

Runs after exports, assets and graphs, when every model's `files` names the real files (exports and graphs add
theirs as absolute paths), so the copy is byte for byte what the other model serves. A chain (a model copying a
file that model itself copies from a third) is followed; a cycle or a file the build did not make is one line.
"""
from pathlib import Path, PurePosixPath

from tritonkit.errors import TritonkitError, shown_path
from tritonkit.package_files import resolve_spec_path
from tritonkit.spec.model_sources import ModelFile, latest_version, model_file
from tritonkit.spec.project import Project


def model_references(project: Project) -> dict[str, dict[str, str]]:
    """{model: {name in its version folder: `model:<other>/<file>`}} as the spec asks (what a dry run reports)."""
    found = {name: {dest: src for v in spec.versions for dest, src in spec.files_of(v).items() if model_file(src)}
             for name, spec in project.models.items()}
    return {name: refs for name, refs in found.items() if refs}


def run_model_files(project: Project) -> dict[str, dict[str, str]]:
    """Replaces every `model:` source with the file's path; returns what `model_references` found."""
    references = model_references(project)
    for name in references:
        spec = project.models[name]
        update = {"files": _resolved(project, name, spec.files, "files"),
                  "version_files": {v: _resolved(project, name, files, f"version_files.{v}")
                                    for v, files in spec.version_files.items()}}
        project.models[name] = type(spec).model_validate({**spec.model_dump(by_alias=True), **update})
    return references


def _resolved(project: Project, name: str, files: dict[str, str], field: str) -> dict[str, str]:
    """`files` of model `name` with each `model:` source replaced by the path of the file it names."""
    out = {}
    for dest, source in files.items():
        ref = model_file(source)
        out[dest] = source if ref is None else str(_source(project, ref, f"models.{name}.{field}.{dest}", [name]))
    return out


def _source(project: Project, ref: ModelFile, field: str, chain: list[str]) -> Path:
    """The file `ref` names, following references through other models; `chain`: the models on the way."""
    shown = shown_path(project.origin(chain[0]))
    if ref.model in chain:
        loop = " -> ".join([*chain, ref.model])
        raise TritonkitError(shown, field, f"model: files form a cycle ({loop})",
                             "copy the file from the model that makes it")
    other = project.models[ref.model]
    files = other.files_of(latest_version(other))
    for name, source in files.items():
        inner = PurePosixPath(ref.file).relative_to(name) if PurePosixPath(ref.file).is_relative_to(name) else None
        if inner is None:
            continue
        next_ref = model_file(source)
        found = (_source(project, next_ref, field, [*chain, ref.model]) if next_ref
                 else resolve_spec_path(source, project.origin(ref.model).parent))
        path = found / inner if inner.parts else found
        if path.is_file():
            return path
    raise TritonkitError(shown, field, f"model '{ref.model}''s build put no '{ref.file}' in its version folder (it has "
                         f"{', '.join(sorted(files)) or 'nothing'})", f"name one of those files in '{ref}'")
