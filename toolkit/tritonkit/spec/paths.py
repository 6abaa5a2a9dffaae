"""Every file path a model's spec names, and the check that keeps each inside the project or the package.

The build copies `files:`, label files, warmup and initial-state data into the repository and the export reads
`source:` files; a path that leads elsewhere (absolute, `../`, a symlink) is refused when the spec is
loaded, before anything is read, exported or written.
"""
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from tritonkit.errors import Problem
from tritonkit.package_files import escapes, resolve_spec_path
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.model_sources import model_file
from tritonkit.spec.sections import sections

OUTSIDE_FIX = ("copy it into the project folder and name it relative to the spec (or "
               "tritonkit:<path> for a shipped file)")


def copied_files(spec: ModelSpec) -> Iterator[tuple[str, str, str]]:
    """(field, destination inside the model directory, source as written) for every file the build copies."""
    for version in spec.versions:
        own = spec.version_files.get(version, {})
        for dest, source in spec.files_of(version).items():
            yield f"version_files.{version}.{dest}" if dest in own else f"files.{dest}", f"{version}/{dest}", source
    for i, output in enumerate(spec.output):
        if output.label_filename:
            yield f"output[{i}].label_filename", PurePosixPath(output.label_filename).name, output.label_filename
    for i, warmup in enumerate(spec.model_warmup):
        for key, data in warmup.inputs.items():
            if data.input_data_file:
                name = PurePosixPath(data.input_data_file).name
                yield f"model_warmup[{i}].inputs.{key}.input_data_file", f"warmup/{name}", data.input_data_file
    if spec.sequence_batching is not None:
        for i, state in enumerate(spec.sequence_batching.state):
            for j, init in enumerate(state.initial_state):
                if init.data_file:
                    name = PurePosixPath(init.data_file).name
                    where = f"sequence_batching.state[{i}].initial_state[{j}].data_file"
                    yield where, f"initial_state/{name}", init.data_file


def read_files(spec: ModelSpec) -> Iterator[tuple[str, str]]:
    """(field, path as written) for every file or folder the export or a pipeline's build step reads or imports from."""
    for name, section in sections(spec):
        for field, path in section.read_paths().items():
            yield f"{name}.{field}", path
    source = spec.source
    if source is None:
        return
    if source.python and source.python.rsplit(":", 1)[0].endswith(".py"):
        yield "source.python", source.python.rsplit(":", 1)[0]
    for field in ("torchscript", "onnx"):
        if value := getattr(source, field):
            yield f"source.{field}", value
    for i, weights in enumerate(source.weights):
        yield f"source.weights[{i}]", weights
    for i, folder in enumerate(source.python_path):
        yield f"source.python_path[{i}]", folder


def outside_problem(file: str, field: str, written: str, resolved: Path, project_root: Path) -> Problem | None:
    """A located problem when `resolved` leaves the project folder and the package, else None."""
    if not escapes(resolved, project_root):
        return None
    return Problem(file, field, f"'{written}' resolves to {resolved.resolve()}, outside the project folder "
                   f"{project_root} and the tritonkit package", OUTSIDE_FIX)


def escaping_paths(spec: ModelSpec, base: Path, project_root: Path, file: str, prefix: str) -> list[Problem]:
    """One problem per spec path of model `spec` (relative to `base`) that leads outside the allowed folders."""
    # model: is checked apart
    copied = {field: source for field, _, source in copied_files(spec) if model_file(source) is None}
    named = copied | dict(read_files(spec))
    found = (outside_problem(file, f"{prefix}.{field}", source, resolve_spec_path(source, base), project_root)
             for field, source in named.items())
    return [p for p in found if p is not None]
