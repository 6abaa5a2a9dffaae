"""`tritonkit export MODEL`: export and verify one model of the spec on its own, without building."""
from pathlib import Path

import click

from tritonkit.cli.output import emit_json, json_option, reports_errors, spec_option
from tritonkit.errors import TritonkitError, shown_path
from tritonkit.repository.exports import run_exports
from tritonkit.spec.loader import load_project


@click.command("export")
@click.argument("model")
@spec_option
@json_option
@reports_errors
def export_command(model: str, spec: Path, as_json: bool) -> None:
    """Export MODEL (its `source:`) to ONNX/TensorRT and verify it numerically against PyTorch.

    The export runs in a child process with a timeout, leaves its log and a reproduce script in
    .tritonkit/cache/export/, and is skipped when nothing that goes into it changed.

    \b
    Example:
      tritonkit export mlp
      tritonkit export encoder -f tritonkit.yaml --json
    """
    project = load_project(spec)
    if model not in project.models:
        raise TritonkitError(shown_path(project.spec_path), f"models.{model}", f"no model named '{model}'",
                             f"use one of: {', '.join(project.models)}")
    if project.models[model].source is None:
        raise TritonkitError(shown_path(project.origin(model)), f"models.{model}.source", "the model has no source to "
                             "export", "add source: {python: package.module:function} (or torchscript:/onnx:)")
    project.models = {model: project.models[model]}
    result = run_exports(project)[model]
    summary = {
        "model": model, "exporter": result.exporter, "why": result.exporter_reason, "cache_hit": result.cache_hit,
        "files": [str(p) for p in result.model_files], "inputs": result.inputs, "outputs": result.outputs,
        "max_errors": result.max_errors, "log": str(result.log_path), "reproduce": str(result.reproduce_path),
        "seconds": result.elapsed_s, "quantized": result.quantized,
    }
    if as_json:
        emit_json({"ok": True, **summary})
        return
    click.echo(f"{model}: exported with {result.exporter} "
               f"({result.exporter_reason}){' [cached]' if result.cache_hit else ''}")
    for output, errors in result.max_errors.items():
        click.echo(f"  {output}: " + ", ".join(f"{k} {v:.3g}" for k, v in errors.items()))
    for kind, tensors in (("input", result.inputs), ("output", result.outputs)):
        for t in tensors:
            click.echo(f"  {kind} {t['name']}: {t['data_type']} {t['dims']}")
    if result.quantized:
        from tritonkit.export.api import quantized_line  # start-up: the export stack, for a quantized result only

        click.echo(f"  {quantized_line(result.quantized)}")
    click.echo(f"  files: {', '.join(p.name for p in result.model_files)}; log: {result.log_path}")
