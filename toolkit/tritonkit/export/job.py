"""The export boundary: the job the CLI's process gives the export child (job.json) and the outcome it gets back
(result.json), typed on both sides and checked when read, so a field one side renames fails here in one line.
"""
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, ConfigDict, SerializeAsAny, TypeAdapter, ValidationError

from tritonkit.errors import Where
from tritonkit.export.errors import ExportError
from tritonkit.export.signature import Signature
from tritonkit.spec.export import ExportSpec, SourceSpec
from tritonkit.spec.schema import spec_schema

T = TypeVar("T")


def _installed(value: object) -> object:
    """job.json's `export` read by the installed schema's ExportSpec, with the pipelines' sections of `quantize`
    that the core's lacks."""
    return value if isinstance(value, ExportSpec) else spec_schema().export.model_validate(value)


@dataclass(frozen=True)
class ExportJob:
    """One model to export: its source and options, where relative paths resolve, and where errors point."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: str
    source: SourceSpec
    export: SerializeAsAny[Annotated[ExportSpec, BeforeValidator(_installed)]]
    max_batch_size: int
    project_dir: Path
    spec_file: str = "tritonkit.yaml"

    @property
    def where(self) -> Where:
        return Where(self.spec_file, f"models.{self.name}")


@dataclass
class ExportOutcome:
    """What the child made and how it checked it; `files` and `golden` are names inside its artifacts folder."""

    __pydantic_config__ = ConfigDict(extra="forbid")
    name: str
    source_kind: str
    files: list[str]
    opset: int
    exporter: str
    exporter_reason: str
    attempts: list[dict[str, str]]  # {exporter, reason, stage, error} per exporter tried
    signature: Signature
    dynamic_axes: dict[str, dict[int, str]]
    max_errors: dict[str, dict[str, float]]
    cases: list[str]
    output_sizes: dict[str, list[list[int]]]
    golden: list[str]
    weights_sha256: str
    deps: list[dict[str, str]]  # what the child read: {file, sha256} or {dist, version} (see `deps.py`)
    example_shapes: dict[str, list[int]]
    tensorrt: dict[str, Any] | None = None
    #: a weight-only quantized graph: settings, sizes, max errors against PyTorch, `lm` measures (see onnx2nbits.py)
    quantized: dict[str, Any] | None = None
    elapsed_s: float = 0.0


def write(value: ExportJob | ExportOutcome, path: Path) -> None:
    """`value` as indented JSON."""
    data = TypeAdapter(type(value)).dump_python(value, mode="json")
    path.write_text(json.dumps(data, indent=2) + "\n")


def read(kind: type[T], path: Path) -> T:
    """The job or outcome in `path`; a missing, mistyped or unknown field is one ExportError naming it."""
    what, again = (("export job", f"run the export again (tritonkit writes a fresh {path.name})") if kind is ExportJob
                   else ("export result", f"delete {path.parent.parent} and run the export again"))
    try:
        return TypeAdapter(kind).validate_json(path.read_bytes())
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise ExportError(str(path), field, f"not a valid {what}: {first['msg'].lower()}", again) from None
