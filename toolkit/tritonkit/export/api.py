"""`export_model`: one model's source -> verified model file(s) in its version dir, golden samples, signature.

This runs in the CLI's process and never imports torch: the work happens in an isolated child
(`isolation.py`), and is skipped when the cache says nothing that went into it has changed.
"""
import shutil
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tritonkit import golden
from tritonkit.export import onnx2trt
from tritonkit.export.cache import CACHE_FORMAT, ExportCache, code_fingerprint, key_of, tool_versions
from tritonkit.export.isolation import run_child
from tritonkit.export.job import ExportJob
from tritonkit.export.progress import Progress, StderrProgress
from tritonkit.export.signature import Signature, check_output_sizes, reconcile
from tritonkit.export.torch2trt import require_torch_tensorrt
from tritonkit.files import Below, sha256_file
from tritonkit.plugin.host import quantize_checks
from tritonkit.spec.export import SourceSpec

#: Files an export may own inside a version directory (stale ones are removed when not produced again).
MODEL_FILES = ("model.onnx", "model.onnx.data", onnx2trt.ENGINE_FILE, "model.pt")


@dataclass
class ExportResult:
    """What an export produced and how it was checked."""

    name: str
    model_files: list[Path]
    signature: Signature
    exporter: str
    exporter_reason: str
    max_errors: dict[str, dict[str, float]]
    cases: list[str]
    golden_files: list[Path]
    cache_hit: bool
    cache_key: str
    work_dir: Path
    attempts: list[dict[str, str]] = field(default_factory=list)
    tensorrt: dict[str, Any] | None = None
    quantized: dict[str, Any] | None = None
    elapsed_s: float = 0.0
    log_path = Below("export.log", base="work_dir")
    reproduce_path = Below("reproduce.sh", base="work_dir")

    @property
    def onnx_path(self) -> Path | None:
        """model.onnx in the version dir (None when only an engine was installed)."""
        return next((p for p in self.model_files if p.name == "model.onnx"), None)

    @property
    def inputs(self) -> list[dict[str, Any]]:
        """Config `input` entries: [{name, data_type, dims}]."""
        return self.signature.as_dict()["inputs"]

    @property
    def outputs(self) -> list[dict[str, Any]]:
        """Config `output` entries: [{name, data_type, dims}]."""
        return self.signature.as_dict()["outputs"]


def _hash_paths(paths: list[Path]) -> dict[str, str]:
    """sha256 per file; folders contribute every file below them."""
    out: dict[str, str] = {}
    for path in paths:
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            out[str(f)] = sha256_file(f) if f.is_file() else "missing"
    return out


def _source_files(source: SourceSpec, project_dir: Path) -> list[Path]:
    """Files named by the spec whose bytes define the model: TorchScript/ONNX files (with external data), weights."""
    files = [(project_dir / w).resolve() for w in source.weights]
    if source.torchscript:
        files.append((project_dir / source.torchscript).resolve())
    if source.onnx:
        path = (project_dir / source.onnx).resolve()
        files.append(path)
        if path.is_file():
            import onnx
            from onnx.external_data_helper import ExternalDataInfo, uses_external_data

            model = onnx.load(str(path), load_external_data=False)
            locations = {ExternalDataInfo(t).location for t in model.graph.initializer if uses_external_data(t)}
            files += [path.parent / loc for loc in sorted(locations)]
    return files


def _measure_files(job: ExportJob) -> list[Path]:
    """Files a pipeline's measures of the quantized graph read by native code (a tokenizer), hashed for the cache."""
    quantize = job.export.quantize
    sections = [(check, getattr(quantize, check.field, None)) for check in quantize_checks()] if quantize else []
    return [(job.project_dir / path).resolve() for check, section in sections if section
            for path in check.reads(section)]


def cache_payload(job: ExportJob) -> dict[str, Any]:
    """Everything known before running user code that decides the export's output."""
    return {
        "format": CACHE_FORMAT, "name": job.name, "source": job.source.model_dump(mode="json"),
        "export": job.export.model_dump(mode="json", exclude={"config_io"}),  # config_io: not the output's
        "max_batch_size": job.max_batch_size,
        "project_dir": str(job.project_dir.resolve()), "versions": tool_versions(), "code": code_fingerprint(),
        "files": _hash_paths(_source_files(job.source, job.project_dir) + _measure_files(job)),
    }


def _install(artifacts: Path, version_dir: Path, golden_dir: Path, wanted: list[str]) -> tuple[list[Path], list[Path]]:
    """Copies model files into the version dir and golden samples into the golden dir; removes stale ones."""
    version_dir.mkdir(parents=True, exist_ok=True)
    installed = []
    for name in MODEL_FILES:
        target = version_dir / name
        if name in wanted:
            shutil.copy2(artifacts / name, target)
            installed.append(target)
        else:
            target.unlink(missing_ok=True)
    golden.clear(golden_dir)
    golden_dir.mkdir(parents=True, exist_ok=True)
    copied = []
    for src in sorted((artifacts / "golden").iterdir()):
        shutil.copy2(src, golden_dir / src.name)
        copied.append(golden_dir / src.name)
    return installed, copied


def export_model(job: ExportJob, version_dir: Path, golden_dir: Path, cache_dir: Path, progress: Progress | None = None,
                 *, inputs: list[Any] | None = None, outputs: list[Any] | None = None) -> ExportResult:
    """Exports, verifies and installs one model; raises a TritonkitError subclass with one line on failure.

    `cache_dir` is the export cache root (e.g. `<project>/.tritonkit/cache/export`); `inputs`/`outputs` are
    the spec's config entries, checked against the graph (see `signature.reconcile`).
    """
    started = time.monotonic()
    progress = progress or StderrProgress()
    job = replace(job, project_dir=job.project_dir.resolve())
    options, where, max_batch_size = job.export, job.where, job.max_batch_size

    def report(stage: str) -> None:
        progress(job.name, stage, time.monotonic() - started)

    if options.format == "tensorrt" and options.tensorrt.mode == "local":
        onnx2trt.require_local_tensorrt(job.name, where)
    if options.format == "torch_tensorrt":
        require_torch_tensorrt(job.name, where)
    cache = ExportCache(cache_dir)
    payload = cache_payload(job)
    key = key_of(payload)
    entry = cache.lookup(key)
    hit = entry is not None
    if entry is not None:
        report(f"cache hit ({key})")
    else:
        report(f"cache miss ({key}): exporting in a child process")
        entry = cache.prepare(key)
        run_child(job, entry, report)
        cache.commit(entry, payload, entry.result().deps)
    result = entry.result()
    tensorrt = result.tensorrt
    if options.format == "tensorrt" and options.tensorrt.mode == "deferred":
        tensorrt = onnx2trt.deferred_plan(result, options, max_batch_size)
    wanted = list(result.files)  # model.onnx stays beside a plan: the embedded server falls back to it
    if tensorrt and tensorrt["mode"] == "local":
        wanted.append(tensorrt["engine"])
    model_files, golden_files = _install(entry.artifacts, version_dir, golden_dir, wanted)
    signature = reconcile(result.signature, inputs, outputs, where)
    check_output_sizes(signature, result.output_sizes, max_batch_size, outputs, where)
    if result.quantized:
        report(quantized_line(result.quantized))
    report("installed " + ", ".join(p.name for p in model_files))
    return ExportResult(
        name=job.name, model_files=model_files, signature=signature, exporter=result.exporter,
        exporter_reason=result.exporter_reason, max_errors=result.max_errors, cases=result.cases,
        golden_files=golden_files, cache_hit=hit,
        cache_key=key, work_dir=entry.dir, attempts=result.attempts, tensorrt=tensorrt, quantized=result.quantized,
        elapsed_s=round(time.monotonic() - started, 3),
    )


def _size(size: int) -> str:
    return f"{size / 2**20:.0f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"


def quantized_line(quantized: dict[str, Any]) -> str:
    """The build log's line on a quantized graph: its size and what a pipeline's measures found of it."""
    q = quantized
    rescored = f", tied head int4, its top {q['head_rescore_top_k']} rescored" if q.get("head_rescore_top_k") else ""
    line = (f"quantized {q['weights']} (blocks of {q['block_size']}, embedding {q['embedding']}{rescored}): "
            f"{_size(q['bytes_quantized'])} from {_size(q['bytes_float'])}")
    return line + "".join(check.line(q[check.field]) for check in quantize_checks() if q.get(check.field))
