"""The files a config names, checked the way the container does at load: label files, model files, the graph.

Triton's core reads every `label_filename` from the model folder (Model::Init) and refuses the model when one
is missing; each backend opens `<version>/<default_model_filename>` (or, on a GPU whose compute capability
`cc_model_filenames` names, that file) and the onnxruntime and pytorch backends compare the config with the
model they loaded. These checks run offline on the repository folder (`tritonkit validate DIR`) and on a
build plan's files before anything is written, so both say what the official container would say.
"""
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tritonkit.errors import shown_path
from tritonkit.triton.layout import FILE_BACKENDS
from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding
from tritonkit.validate.onnx_checks import check_onnx_model
from tritonkit.validate.torchscript_checks import check_torchscript_model


class ModelFolder(Protocol):
    """A model folder as Triton will see it: on disk, or the files a build is about to write."""

    def file(self, rel: str) -> Path | None:
        """The readable file that will sit at `<model>/<rel>`, or None."""

    def has(self, rel: str) -> bool:
        """Whether a file or folder will sit at `<model>/<rel>`."""

    def put(self, rel: str, what: str) -> str:
        """The fix that puts `what` (e.g. "model file") at `<model>/<rel>`."""

    def shown(self, rel: str) -> str:
        """How messages name the file at `<model>/<rel>`."""


@dataclass(frozen=True)
class DiskFolder:
    """A model folder of an existing repository."""

    path: Path

    def file(self, rel: str) -> Path | None:
        found = self.path / rel
        return found if found.is_file() else None

    def has(self, rel: str) -> bool:
        return (self.path / rel).exists()

    def put(self, rel: str, what: str) -> str:
        return f"put the {what} in {self.path.name}/{rel}"

    def shown(self, rel: str) -> str:
        return rel  # next to the config.pbtxt the message names


@dataclass(frozen=True)
class PlannedFolder:
    """The files a build copies into one model folder (path inside the folder -> source file), and those a later
    step makes (`made`: a dry run's `model:<other>/<file>` copies, deferred TensorRT engines), which will exist
    but cannot be read yet."""

    copies: dict[str, Path]
    made: frozenset[str] = frozenset()

    def file(self, rel: str) -> Path | None:
        return self.copies.get(rel)

    def has(self, rel: str) -> bool:
        folder = rel.rstrip("/") + "/"
        return rel in self.copies or rel in self.made or any(key.startswith(folder) for key in self.copies)

    def put(self, rel: str, what: str) -> str:
        entry = rel.partition("/")[2]  # only version files: label files are the build's own to report
        return f"add the {what} to the model's files (files: {{{entry}: path/to/{entry}}})"

    def shown(self, rel: str) -> str:
        source = self.copies.get(rel)
        return rel if source is None else shown_path(source)  # the user's file; versions sharing it give one line


def check_model_files(name: str, c: pb.ModelConfig, folder: ModelFolder, loaded: list[int],
                      from_spec: bool = False) -> list[Finding]:
    """Findings on the files config `c` (its backend fields filled in as Triton does) needs in `folder`;
    `loaded`: the versions Triton loads. `from_spec`: the build has reported every label file and Python
    model.py the spec names but cannot copy, in the spec's terms, so they are not reported again."""
    found = [] if from_spec else _label_files(name, c, folder)
    for v in loaded:
        missing = [] if from_spec and c.backend == "python" else _missing_model_files(name, c, folder, v)
        found += missing
        if not missing:
            found += _model_contents(name, c, folder, v)
    return list(dict.fromkeys(found))  # once each: versions holding the same model give the same line


def _loaded_file(c: pb.ModelConfig, folder: ModelFolder, version: int) -> tuple[str, Path | None]:
    """(path inside the model folder, file) of the model a CPU instance of `version` loads: an ONNX folder
    holds its graph as model.onnx (the onnxruntime backend's rule)."""
    rel = f"{version}/{c.default_model_filename}"
    if c.backend == "onnxruntime" and folder.file(rel) is None and folder.has(rel):
        rel += "/model.onnx"
    return rel, folder.file(rel)


def _label_files(name: str, c: pb.ModelConfig, folder: ModelFolder) -> list[Finding]:
    return [Finding(name, f"output[{i}].label_filename", f"'{t.label_filename}' is not a file in the model folder, so "
                    f"Triton refuses to load '{name}'", f"{folder.put(t.label_filename, 'label file')}, or remove "
                    "label_filename") for i, t in enumerate(c.output)
            if t.label_filename and folder.file(t.label_filename) is None]


def _missing_model_files(name: str, c: pb.ModelConfig, folder: ModelFolder, v: int) -> list[Finding]:
    """The default model file (unless `cc_model_filenames` may cover every GPU) and every per-GPU file."""
    if c.backend not in FILE_BACKENDS or not c.default_model_filename:
        return []
    found = []
    rel = f"{v}/{c.default_model_filename}"
    if not folder.has(rel):
        problem = f"version {v} has no {c.default_model_filename}, which the {c.backend} backend loads"
        if not c.cc_model_filenames:
            found.append(Finding(name, "backend", problem, f"{folder.put(rel, 'model file')} (or set "
                                 "default_model_filename)"))
        elif any(g.kind != pb.ModelInstanceGroup.KIND_GPU for g in c.instance_group) or not c.instance_group:
            found.append(Finding(name, "default_model_filename", f"{problem} on CPUs and on GPUs that "
                                 "cc_model_filenames does not list",
                                 f"{folder.put(rel, 'model file')}, or use KIND_GPU instance groups only", "warning"))
    for cc, filename in sorted(c.cc_model_filenames.items()):
        if not folder.has(f"{v}/{filename}"):
            found.append(Finding(name, f"cc_model_filenames.{cc}", f"version {v} has no {filename}, which the "
                                 f"{c.backend} backend loads on GPUs of compute capability {cc}",
                                 folder.put(f"{v}/{filename}", "model file")))
    return found


def _model_contents(name: str, c: pb.ModelConfig, folder: ModelFolder, v: int) -> list[Finding]:
    """The config against the model file, for the backends that compare them at load."""
    if c.backend not in ("onnxruntime", "pytorch") or c.runtime == "model.py":  # a PyTorch model.py is Python code
        return []
    rel, path = _loaded_file(c, folder, v)
    if path is None:
        return []
    check = check_onnx_model if c.backend == "onnxruntime" else check_torchscript_model
    return check(name, c, path, folder.shown(rel))
