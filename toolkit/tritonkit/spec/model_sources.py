"""`files:` sources of the form `model:<other>/<file>`: a file another model's build puts in its version folder.

Triton reading an `s3://` repository downloads each model into a temporary folder of its own, so no model can
read a sibling's folder there. A model that needs a file another model's build makes (the symbol table beside a
TTS model, the decoding graph beside an acoustic model) names it this way and gets its own copy: the build copies
it from the other model's latest version folder after exports and pipeline build steps ran. A name that no build step
of the other model provides is refused when the spec is loaded.

A parameter may take another model's value the same way, `model:<other>/<parameter>` (e.g. the streaming ASR
model's `receptive_frames: model:acoustic/receptive_frames`): the value is copied when the spec is loaded, so the
model's own config.pbtxt holds it and nothing reads a sibling's config at run time.
"""
from dataclasses import dataclass
from pathlib import PurePosixPath

from tritonkit.errors import Problem
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.sections import sections

MODEL_PREFIX = "model:"
#: What an export may put in a version folder (which of them depends on the format and the model's size).
EXPORT_FILES = ("model.onnx", "model.onnx.data", "model.plan", "model.pt")
FORM = "model:<model>/<file>"


@dataclass(frozen=True)
class ModelFile:
    """A file of another model's latest version folder: `model` and the path inside that folder."""

    model: str
    file: str

    def __str__(self) -> str:
        return f"{MODEL_PREFIX}{self.model}/{self.file}"


def model_file(source: str) -> ModelFile | None:
    """The reference a `files:` source names, or None for a plain path (or `tritonkit:` file)."""
    if not source.startswith(MODEL_PREFIX):
        return None
    model, _, file = source[len(MODEL_PREFIX):].partition("/")
    return ModelFile(model, file)


def latest_version(spec: ModelSpec) -> int:
    """The version folder a `model:` reference copies from: the highest, the one Triton's default policy serves."""
    return max(spec.versions)


def provided_names(spec: ModelSpec) -> list[str]:
    """Names the build puts in the model's latest version folder: its `files`, its pipeline steps' and export files."""
    names = set(spec.files_of(latest_version(spec)))
    for _, section in sections(spec):
        names.update(section.provides())
    if spec.source is not None:
        names.update(EXPORT_FILES)
    return sorted(names)


def provides(spec: ModelSpec, file: str) -> bool:
    """Whether `file` (a name, or a path inside a copied folder) is among what the build puts there."""
    parts = PurePosixPath(file).parts
    if not file or file.startswith("/") or ".." in parts:
        return False
    names = provided_names(spec)
    return file in names or any(file.startswith(f"{name}/") for name in names)


def reference_problems(models: dict[str, ModelSpec], shown: dict[str, str]) -> list[Problem]:
    """One problem per `model:` source that names no other model of the spec or a file that model lacks."""
    problems: list[Problem] = []
    for name, spec in models.items():
        for version in spec.versions:
            own = spec.version_files.get(version, {})
            for dest, source in spec.files_of(version).items():
                ref = model_file(source)
                if ref is None:
                    continue
                field = f"models.{name}." + (f"version_files.{version}.{dest}" if dest in own else f"files.{dest}")
                problem = _problem(name, ref, models)
                if problem and not any(p.field == field for p in problems):
                    problems.append(Problem(shown[name], field, *problem))
    return problems


def _problem(name: str, ref: ModelFile, models: dict[str, ModelSpec]) -> tuple[str, str] | None:
    """(problem, fix) for one reference, None when it is sound."""
    if ref.model == name:
        return (f"'{ref}' names this model itself", f"name the file by its path instead ({FORM} "
                "copies another model's file)")
    if ref.model not in models:
        known = ", ".join(sorted(m for m in models if m != name)) or "none"
        return f"'{ref}' names no model of the spec", f"write {FORM} with one of: {known}"
    if not provides(models[ref.model], ref.file):
        names = ", ".join(provided_names(models[ref.model])) or "none"
        return (f"model '{ref.model}' has no file '{ref.file}' in its version folder",
                f"give '{ref.model}' one (files: {{{ref.file}: <path>}}) or name one of what its "
                f"build puts there ({names})")
    return None


def copied_parameters(models: dict[str, ModelSpec],
                      shown: dict[str, str]) -> tuple[dict[str, ModelSpec], list[Problem]]:
    """The models with every `model:<other>/<parameter>` parameter value replaced by that model's value."""
    problems: list[Problem] = []
    out = dict(models)
    for name, spec in models.items():
        values = dict(spec.parameters)
        for key, value in spec.parameters.items():
            ref = model_file(value) if isinstance(value, str) else None
            if ref is None:
                continue
            problem = _parameter_problem(name, ref, models)
            if problem:
                problems.append(Problem(shown[name], f"models.{name}.parameters.{key}", *problem))
            else:
                values[key] = models[ref.model].parameters[ref.file]
        if values != spec.parameters:
            out[name] = spec.model_copy(update={"parameters": values})
    return out, problems


def _parameter_problem(name: str, ref: ModelFile, models: dict[str, ModelSpec]) -> tuple[str, str] | None:
    """(problem, fix) for a parameter taken from another model, None when that model sets a plain value."""
    if ref.model == name or ref.model not in models:
        known = ", ".join(sorted(m for m in models if m != name)) or "none"
        return f"'{ref}' names no other model of the spec", f"write model:<model>/<parameter> with one of: {known}"
    other = models[ref.model].parameters
    if ref.file not in other:
        return (f"model '{ref.model}' has no parameter '{ref.file}'", f"set models.{ref.model}.parameters.{ref.file} "
                f"(it has {', '.join(sorted(other)) or 'none'})")
    if isinstance(other[ref.file], str) and model_file(str(other[ref.file])):
        return (f"model '{ref.model}''s parameter '{ref.file}' is itself taken from another model",
                "name the model that sets its value")
    return None
