"""Runs the exports a spec asks for and folds their results into the models before rendering.

An exported model takes its inputs and outputs from the graph (or the spec's, checked against it), its
backend from the export format, and its model files and golden samples from the export. Artifacts land
in `.tritonkit/exports/<model>/` first and reach the repository through the same atomic write as
everything else, so a failed export leaves the previous repository untouched.
"""
from typing import Any

from tritonkit.errors import shown_path
from tritonkit.export.api import ExportResult, export_model
from tritonkit.export.cache import default_root
from tritonkit.export.job import ExportJob
from tritonkit.export.progress import Progress
from tritonkit.spec.export import ExportSpec
from tritonkit.spec.model import ModelSpec
from tritonkit.spec.project import Project

#: Serving backend for each export format.
FORMAT_BACKEND = {"onnx": "onnxruntime", "tensorrt": "tensorrt", "torch_tensorrt": "pytorch"}


def run_exports(project: Project, progress: Progress | None = None) -> dict[str, ExportResult]:
    """Exports every model with a `source`, in spec order, and updates `project.models` in place."""
    results: dict[str, ExportResult] = {}
    for name, spec in list(project.models.items()):
        if spec.source is None:
            continue
        staging = project.root / ".tritonkit" / "exports" / name
        graph_io = spec.export is None or spec.export.config_io == "graph"
        origin = project.origin(name)
        job = ExportJob(name, spec.source, spec.export or ExportSpec(), spec.max_batch_size, origin.parent,
                        shown_path(origin))
        result = export_model(
            job, staging / "version", staging / "golden", default_root(project.root), progress,
            inputs=(spec.input or None) if graph_io else None, outputs=(spec.output or None) if graph_io else None,
        )
        if not graph_io:  # the model's own inputs and outputs: the graph's golden samples would not replay through it
            result.golden_files = []
        project.models[name] = exported_spec(spec, result)
        results[name] = result
    return results


def exported_spec(spec: ModelSpec, result: ExportResult) -> ModelSpec:
    """The model as served: graph signature, backend of the format, model files and golden samples added."""
    fmt = spec.export.format if spec.export else "onnx"
    backend = FORMAT_BACKEND[fmt]
    update: dict[str, Any] = {"files": {**{p.name: str(p) for p in result.model_files}, **spec.files}}
    if not spec.input:
        update["input"] = result.inputs
    if not spec.output:
        update["output"] = result.outputs
    if spec.platform is None and spec.backend is None:
        update["backend"] = backend  # each backend's default file name is the one the export writes
    return type(spec).model_validate({**spec.model_dump(by_alias=True), **update})
