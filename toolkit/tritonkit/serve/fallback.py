"""Makes a built repository servable by the embedded server, whose only backend is Python.

ONNX Runtime, TensorRT and PyTorch models are swapped for a generated Python-backend model that runs the model's ONNX
file with onnxruntime on the CPU, keeping name, tensors, batching, instance groups and sequence settings. `serving.py`
writes the result into a separate serving directory; the built repository is never written to.
"""
import shutil
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import Problem
from tritonkit.serve.onnx_model import ONNX_FILE_PARAMETER
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.layout import PLATFORMS, complete_backend_fields, read_config, read_versions, version_dirs
from tritonkit.triton.model_config import int_parameter
from tritonkit.triton.model_config import pb as mc

_HERE = Path(__file__).parent
ADAPTER, RUNNER = _HERE / "onnx_model.py", _HERE / "onnx_runner.py"
RUNNER_MODULE_FILE = "tritonkit_onnx_runner.py"
#: Backend/platform names (and the file they load by default) that the fallback replaces.
FALLBACK_KINDS = {p: PLATFORMS[p] for p in ("onnxruntime_onnx", "tensorrt_plan", "pytorch_libtorch")}
#: The stand-in backend directory for a published repository, under the server's work directory.
STAND_IN_BACKENDS = "backends"


@dataclass(frozen=True)
class Fallback:
    """A model the embedded server runs through onnxruntime instead of its own backend."""

    name: str
    kind: str
    onnx_file: str
    #: Intra-op threads per instance; 0 lets the runner split the cores over the instances it is loaded with.
    threads: int

    def describe(self) -> str:
        threads = self.threads or "cores / instances"
        return (f"model '{self.name}' ({self.kind}) runs as a Python-backend model on onnxruntime "
                f"(CPU, {self.onnx_file}, {threads} intra-op threads)")


def stand_in_backends(runtime_backends: Path, work_dir: Path) -> Path:
    """The runtime's backends plus `onnxruntime` as a Python-based backend made of the fallback adapter.

    A published (s3://) repository is read by Triton itself, so its ONNX models cannot be rewritten as a local
    copy's are; Triton loads `backends/<name>/model.py` for `backend: "<name>"` (and platform onnxruntime_onnx),
    so with this directory they load unchanged, on onnxruntime as locally.
    """
    backends = work_dir / STAND_IN_BACKENDS
    (backends / "onnxruntime").mkdir(parents=True, exist_ok=True)
    for backend in runtime_backends.iterdir():
        link = backends / backend.name
        if not link.is_symlink() or link.resolve() != backend.resolve():
            link.unlink(missing_ok=True)
            link.symlink_to(backend.resolve(), target_is_directory=backend.is_dir())
    for source, name in ((ADAPTER, "model.py"), (RUNNER, RUNNER_MODULE_FILE)):
        shutil.copyfile(source, backends / "onnxruntime" / name)
    return backends


def kind_of(model_dir: Path, config: mc.ModelConfig | None) -> str | None:
    """The fallback kind (a key of FALLBACK_KINDS), None for a model Triton runs as is, or another backend."""
    if config is None:
        return None
    folders = read_versions(model_dir).folders  # unset fields: Triton fills them in from the first folder's files
    c = complete_backend_fields(model_dir.name, model_dir / folders[0] if folders else None, config)
    kind = next((k for k, (backend, _) in FALLBACK_KINDS.items() if c.platform == k or c.backend == backend), None)
    if kind or c.backend == "python" or c.platform == "ensemble":  # the embedded server runs these itself
        return kind
    return config.backend or config.platform or c.backend or None  # as written, else as Triton fills it in


def gpu_available() -> bool:
    """Whether an NVIDIA GPU is visible to this host."""
    return Path("/dev/nvidiactl").exists() and Path("/dev/nvidia0").exists()


def _problem(model_dir: Path, field: str, problem: str, fix: str) -> Problem:
    return Problem(str(model_dir / "config.pbtxt"), field, problem, fix)


Planned = dict[str, tuple[mc.ModelConfig, Fallback]]


def plan(repository: Path, threads: int | None = None) -> tuple[Planned, list[Problem]]:
    """Decides, per model directory, whether it needs the fallback; collects every model that cannot be served."""
    fallbacks: Planned = {}
    problems: list[Problem] = []
    for model_dir in sorted(p for p in repository.iterdir() if p.is_dir()):
        config = read_config(model_dir)
        kind = kind_of(model_dir, config)
        if kind is None or config is None:
            continue
        field = "platform" if config.platform else "backend"
        if kind not in FALLBACK_KINDS:
            problems.append(_problem(model_dir, field, f"{field} '{kind}' is not available in the embedded server "
                                     "(it has the Python backend only)", "serve this repository with the Triton "
                                     "container (docker compose up) or give the model a Python-backend variant"))
            continue
        onnx_file = config.default_model_filename if kind == "onnxruntime_onnx" and config.default_model_filename \
            else "model.onnx"
        lacking = [v for v in version_dirs(model_dir) if not (v / onnx_file).exists()]
        if lacking or not version_dirs(model_dir):
            where = lacking[0] if lacking else model_dir
            problems.append(_problem(model_dir, field, f"{kind} model '{model_dir.name}' cannot be served embedded: "
                                     f"no {onnx_file} in {where} to run with onnxruntime",
                                     "export the model to ONNX and keep model.onnx beside the "
                                     f"{FALLBACK_KINDS[kind][1]} (tritonkit build does this)"))
            continue
        chosen = threads if threads is not None else int_parameter(config, "intra_op_thread_count")
        fallbacks[model_dir.name] = (config, Fallback(model_dir.name, kind, onnx_file, chosen))
    return fallbacks, problems


def fallback_config(config: mc.ModelConfig, fallback: Fallback, gpu: bool) -> mc.ModelConfig:
    """The same model as a Python-backend model: same tensors, batching, instances and sequence settings."""
    new = mc.ModelConfig()
    new.CopyFrom(config)
    new.ClearField("platform")
    new.ClearField("default_model_filename")
    new.backend = "python"
    new.optimization.ClearField("execution_accelerators")
    new.parameters[ONNX_FILE_PARAMETER].string_value = fallback.onnx_file
    if fallback.threads:  # else the runner splits the cores over this config's instances (variants differ)
        new.parameters["intra_op_thread_count"].string_value = str(fallback.threads)
    if not new.instance_group:
        new.instance_group.extend(instance_groups(config))
    for group in new.instance_group:
        group.count = group_count(config, group)   # the container's default count, not the Python backend's
        if group.kind == mc.ModelInstanceGroup.KIND_GPU and not gpu:
            group.kind = mc.ModelInstanceGroup.KIND_CPU
            del group.gpus[:]
    return new
