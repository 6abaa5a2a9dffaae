"""The export steps as run inside the isolated child: load, export (with fallback), verify, golden, signature.

Everything crash-prone (user code, torch.export, the tracer, onnxruntime, TensorRT) happens here, never in
the CLI's process. Input is an `ExportJob` (job.json), output an `ExportOutcome` (result.json): see `job.py`.
"""
import fnmatch
import hashlib
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from tritonkit import golden
from tritonkit.errors import Where
from tritonkit.export import cases as cases_mod
from tritonkit.export import onnx2trt, sources, torch2onnx, torch2trt
from tritonkit.export.deps import Recorder
from tritonkit.export.errors import ExportError, VerificationError
from tritonkit.export.job import ExportJob, ExportOutcome
from tritonkit.export.onnx2nbits import quantize_graph
from tritonkit.export.signature import graph_shapes, read_signature
from tritonkit.export.verify import check_graph, verify
from tritonkit.plugin.host import quantize_checks
from tritonkit.spec.export import ExportSpec

Progress = Callable[[str], None]


def weights_digest(module: Any) -> str:
    """sha256 over the state_dict (names, dtypes, shapes, bytes): what the weights actually are."""
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{flat.dtype}|{list(tensor.shape)}|".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def dynamic_axes(ranks: dict[str, int], inputs: list[str], requested: dict[str, dict[int, str]], max_batch_size: int,
                 model: Where) -> dict[str, dict[int, str]]:
    """{tensor: {axis: dim name}} for inputs and outputs: the batch axis plus the spec's named dims, checked. A key
    with `*` names every tensor it matches (`past_key_*`: a decoder's per-layer caches)."""
    where = model.at("export.dynamic_axes")
    axes: dict[str, dict[int, str]] = {name: ({0: "batch"} if max_batch_size > 0 else {}) for name in ranks}
    for key, mapping in requested.items():
        tensors = fnmatch.filter(ranks, key) if "*" in key else [key] if key in ranks else []
        if not tensors:
            raise ExportError.at(where.at(key), f"'{key}' is not an input or output of the model",
                                 f"use one of: {', '.join(ranks)}")
        for tensor in tensors:
            for axis, dim in mapping.items():
                if axis >= ranks[tensor]:
                    raise ExportError.at(where.at(key), f"axis {axis} is out of range for rank {ranks[tensor]}",
                                         f"use an axis below {ranks[tensor]}")
                if max_batch_size > 0 and axis == 0:
                    raise ExportError.at(where.at(key),
                                         "axis 0 is the batch axis (max_batch_size > 0) and is always dynamic",
                                         "remove it, or set max_batch_size: 0 to name axis 0 yourself")
                axes[tensor][axis] = dim
    return axes


def _batched_example(example: dict[str, Any], max_batch_size: int, model: Where) -> dict[str, Any]:
    """Checks the batch axis agrees across inputs; a batch of 1 is repeated to 2 (torch.export specializes 1)."""
    if max_batch_size <= 0:
        return example
    sizes = {n: (t.shape[0] if t.dim() else None) for n, t in example.items()}
    if len(set(sizes.values())) != 1 or None in sizes.values():
        raise ExportError.at(model.at("source"), f"example inputs disagree on the batch axis: {sizes}",
                             "give every example input the same first dim, or set max_batch_size: 0")
    if next(iter(sizes.values())) == 1:
        return {n: t.repeat(2, *([1] * (t.dim() - 1))) for n, t in example.items()}
    return example


def _check_lengths(options: ExportSpec, axes: dict[str, dict[int, str]], model: Where) -> None:
    names = {d for mapping in axes.values() for d in mapping.values()} - {"batch"}
    for dim in options.verify.lengths:
        if dim not in names:
            raise ExportError.at(model.at(f"export.verify.lengths.{dim}"), f"'{dim}' is not a dynamic dim name",
                                 f"name one from export.dynamic_axes: {', '.join(sorted(names)) or '(none declared)'}")


def _plan(options: ExportSpec) -> list[tuple[str, str]]:
    if options.exporter == "auto":
        return [("dynamo", "default (export.exporter: auto tries dynamo first)"), ("torchscript", "")]
    return [(options.exporter, f"chosen in the spec (export.exporter: {options.exporter})")]


def _export_torch(job: ExportJob, loaded: sources.Loaded, options: ExportSpec, out_dir: Path,
                  progress: Progress) -> dict[str, Any]:
    """Exports with the planned exporters until one produces a graph that verifies."""
    import torch
    from torch.utils._pytree import tree_leaves

    name, where, mbs = job.name, job.where, job.max_batch_size
    example = _batched_example(loaded.example, mbs, where)
    try:
        output_names = torch2onnx.output_names_of(loaded.module, example, loaded.call_names, options.output_names)
    except ValueError as exc:
        raise ExportError.at(where.at("export.output_names"), str(exc), "list one name per returned tensor") from exc
    adapter = torch2onnx.make_adapter(loaded.module, loaded.call_names)
    input_names = list(example)
    args = tuple(example.values())
    with torch.no_grad():
        outs = tree_leaves(adapter(*args))
    ranks = {n: t.dim() for n, t in example.items()} | {n: t.dim() for n, t in zip(output_names, outs)}
    axes = dynamic_axes(ranks, input_names, options.dynamic_axes, mbs, where)
    _check_lengths(options, axes, where)

    def reference(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        tensors = tuple(torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in input_names)
        with torch.no_grad():
            return {n: o.detach().cpu().numpy() for n, o in zip(output_names, tree_leaves(adapter(*tensors)))}

    example_np = {n: t.detach().cpu().numpy() for n, t in example.items()}
    cases = cases_mod.make_cases(example_np, {n: axes[n] for n in input_names}, mbs, options.verify.batch_sizes,
                                 options.verify.lengths, options.verify.seed)
    attempts: list[dict[str, Any]] = []
    failure: ExportError | None = None
    for exporter, reason in _plan(options):
        if not reason:
            reason = f"fallback: dynamo {attempts[-1]['stage']} failed: {attempts[-1]['error']}"
        progress(f"export ({exporter})")
        try:
            files = torch2onnx.export(exporter, adapter, args, input_names, output_names, axes, options.opset,
                                      out_dir, options.external_data)
        except Exception as exc:  # exporters raise anything; the next exporter may still succeed
            error = torch2onnx.first_line(exc)
            attempts.append({"exporter": exporter, "reason": reason, "stage": "export", "error": error})
            continue
        try:
            progress("check model")
            check_graph(out_dir / "model.onnx", name, where.at("export"))
            report = verify(out_dir / "model.onnx", reference, cases, output_names, options.tolerance, model=name,
                            where=where.at("export"), keep=options.verify.golden_samples, progress=progress)
        except VerificationError as err:
            attempts.append({"exporter": exporter, "reason": reason, "stage": "verification", "error": err.problem})
            failure = err
            continue
        attempts.append({"exporter": exporter, "reason": reason, "stage": "done", "error": ""})
        return {"exporter": exporter, "exporter_reason": reason, "attempts": attempts, "files": [p.name for p in files],
                "report": report, "output_names": output_names, "axes": axes, "example": example_np,
                "weights_sha256": weights_digest(loaded.module), "reference": reference, "cases": cases}
    if failure is not None:
        raise failure
    summary = "; ".join(f"{a['exporter']}: {a['error']}" for a in attempts)
    raise ExportError.at(where.at("export.exporter"), f"model '{name}': no exporter produced a graph ({summary})",
                         "see the export log; fix the model code or choose the other exporter")


def _export_onnx_source(job: ExportJob, loaded: sources.Loaded, options: ExportSpec, out_dir: Path,
                        progress: Progress) -> dict[str, Any]:
    """An ONNX source: normalized into out_dir, checked, and run at several shapes (no PyTorch to compare with)."""
    name, where, mbs = job.name, job.where, job.max_batch_size
    progress("copy onnx")
    assert loaded.onnx_path is not None, "an ONNX source always loads with its path"
    files = torch2onnx.finalize(loaded.onnx_path, out_dir, options.external_data)
    check_graph(out_dir / "model.onnx", name, where.at("source.onnx"))
    shapes = graph_shapes(out_dir / "model.onnx")
    axes = {n: {i: d for i, d in enumerate(shapes[n][1]) if isinstance(d, str) and not (mbs > 0 and i == 0)}
            for n in loaded.example}
    _check_lengths(options, axes, where)
    cases = cases_mod.make_cases(loaded.example, axes, mbs, options.verify.batch_sizes, options.verify.lengths,
                                 options.verify.seed)
    import onnx

    output_names = [o.name for o in onnx.load(str(out_dir / "model.onnx"), load_external_data=False).graph.output]
    report = verify(out_dir / "model.onnx", None, cases, output_names, options.tolerance, model=name,
                    where=where.at("export"), keep=options.verify.golden_samples, progress=progress)
    reason = "onnx source: used as given, run at every verify shape (no PyTorch reference to compare with)"
    return {"exporter": "none", "exporter_reason": reason, "attempts": [], "files": [p.name for p in files],
            "report": report, "output_names": output_names, "axes": axes, "example": loaded.example,
            "weights_sha256": "", "reference": None, "cases": cases}


def _quantize(job: ExportJob, made: dict[str, Any], out_dir: Path, progress: Progress) -> list[dict[str, str]]:
    """Replaces the verified float model.onnx with its weight-only quantized graph, verified against the reference
    (or only run, for an ONNX source) within `quantize.tolerance`; a pipeline's section of `quantize` (`Pipeline
    .quantize`) also has it measured against the float graph. Updates `made` in place (files, report,
    `quantized`); returns what those measures read."""
    options, where = job.export, job.where.at("export.quantize")
    spec = options.quantize
    assert spec is not None, "called only when the spec asks for quantization"
    checks = quantize_checks()
    float_dir = out_dir / "float"
    float_dir.mkdir()
    for name in made["files"]:
        (out_dir / name).rename(float_dir / name)
    progress(f"quantize ({spec.weights}, blocks of {spec.block_size}, embedding {spec.embedding})")
    counts = quantize_graph(float_dir / "model.onnx", out_dir / "model.onnx", spec.bits, spec.block_size,
                            spec.symmetric, spec.embedding_bits, options.external_data == "always",
                            head_rescore_top_k=spec.head_rescore_top_k)
    made["files"] = [p.name for p in sorted(out_dir.glob("model.onnx*"))]
    made["report"] = verify(out_dir / "model.onnx", made["reference"], made["cases"], made["output_names"],
                            spec.tolerance, model=job.name, where=where, keep=options.verify.golden_samples,
                            progress=progress)
    size = lambda folder: sum(p.stat().st_size for p in folder.glob("model.onnx*"))  # noqa: E731
    made["quantized"] = {"weights": spec.weights, "block_size": spec.block_size, "symmetric": spec.symmetric,
                         "embedding": spec.embedding, "head_rescore_top_k": spec.head_rescore_top_k,
                         "matmuls": counts.matmuls, "embeddings": counts.embeddings,
                         "tied_heads": counts.tied_heads, "exact_4bit": counts.exact_4bit,
                         "bytes_float": size(float_dir),
                         "bytes_quantized": size(out_dir), **{check.field: None for check in checks},
                         "max_errors": {n: asdict(e) for n, e in made["report"].errors.items()}}
    deps: list[dict[str, str]] = []
    for check in checks:
        section = getattr(spec, check.field, None)
        if section is None:
            continue
        progress(check.progress)
        with Recorder() as recorder:
            made["quantized"][check.field] = check.measure(float_dir / "model.onnx", out_dir / "model.onnx", section,
                                                           job.project_dir, where.at(check.field))
        deps += recorder.deps()
    shutil.rmtree(float_dir)
    return deps


def run_job(job: ExportJob, out_dir: Path, progress: Progress) -> ExportOutcome:
    """Runs one export job, leaving its files in `out_dir`; returns what it made (result.json in the child)."""
    started = time.monotonic()
    source, options, mbs, where = job.source, job.export, job.max_batch_size, job.where
    progress("load source")
    with Recorder() as recorder:
        if source.kind == "python":
            loaded = sources.from_entry_point(source, job.project_dir, options.input_names, where)
        elif source.kind == "torchscript":
            loaded = sources.from_torchscript(source, job.project_dir, options.verify.seed, where)
        else:
            loaded = sources.from_onnx(source, job.project_dir, mbs, options.verify.seed, where)
    deps = recorder.deps()
    if source.kind == "onnx":
        made = _export_onnx_source(job, loaded, options, out_dir, progress)
    else:
        made = _export_torch(job, loaded, options, out_dir, progress)
    if options.quantize is not None:
        deps += _quantize(job, made, out_dir, progress)
    progress("golden samples")
    report = made["report"]
    tol = golden.tolerance_json(options.tolerance, made["output_names"])
    golden_files = golden.write_pairs(out_dir / "golden", report.pairs, tol)
    outcome = ExportOutcome(
        name=job.name, source_kind=source.kind, files=made["files"], opset=options.opset, exporter=made["exporter"],
        exporter_reason=made["exporter_reason"], attempts=made["attempts"],
        signature=read_signature(out_dir / "model.onnx", mbs, where), dynamic_axes=made["axes"],
        max_errors={n: asdict(e) for n, e in report.errors.items()}, cases=report.cases,
        output_sizes=report.output_sizes,
        golden=[p.name for p in golden_files], weights_sha256=made["weights_sha256"], deps=deps,
        example_shapes={n: list(v.shape) for n, v in made["example"].items()}, quantized=made.get("quantized"),
    )
    if options.format == "tensorrt" and options.tensorrt.mode == "local":
        progress("tensorrt engine")
        outcome.tensorrt = onnx2trt.build_local(out_dir, outcome, options, mbs, report.pairs, where=where,
                                                progress=progress)
    elif options.format == "torch_tensorrt":
        progress("torch-tensorrt")
        outcome.tensorrt = torch2trt.compile_local(loaded, outcome, options, mbs, out_dir, where=where)
    outcome.elapsed_s = round(time.monotonic() - started, 3)
    return outcome
