"""Pod resources derived from the built repository: instance groups, threads and model file sizes.

The rules (docs/commands/deploy.md "Sizing, probes, validation" explains them to users):
- CPU request: 200m for Triton itself (HTTP/gRPC frontends, schedulers) + per CPU instance 1000m for each
  intra-op thread its model asks for (`count x intra_op_thread_count`), else 250m (a Python model, or one that
  names no thread count: a small default, raised by naming the threads) + 250m per GPU instance (the host side
  of a GPU model: batching, copies). No CPU limit: throttling adds latency, never safety.
- Memory request = limit (memory cannot be taken back, so the scheduler reserves what the pod uses):
  256Mi for Triton + per model its loaded files x 1.5 (runtime arenas) for each CPU instance (each loads
  its own copy), once for GPU models (host staging), + 64Mi per Python-backend instance (its stub
  process, measured ~37 MB) + the /dev/shm size (a memory-backed emptyDir counts against the limit)
  + the response cache when a loaded model enables it + per instance what its pipeline says each instance holds
  beyond its files (`Pipeline.instance_memory`, e.g. a KV-cache pool in each instance's process).
- /tmp (Triton downloads an s3:// repository there): 2 x the loaded files (a new version lands beside
  the old one) + 256Mi, also requested as ephemeral storage.
- GPUs: only when some instance group is KIND_GPU: as many as the groups name (`gpus: [0, 1]` -> 2), else 1.
- Startup window: 3 x the measured load time + the download at 50 MB/s + 30 s, in 10 s probe periods.
"""
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from tritonkit.errors import TritonkitError, Where
from tritonkit.plugin.host import installed
from tritonkit.triton.instance_counts import group_count, instance_groups
from tritonkit.triton.layout import NOT_LOADED, loaded_versions, read_versions
from tritonkit.triton.model_config import int_parameter, pb

MIB = 1024 * 1024
SERVER_CPU_MILLIS = 200
CPU_MILLIS_PER_THREAD = 1000
CPU_INSTANCE_MILLIS = 250
GPU_INSTANCE_CPU_MILLIS = 250
SERVER_MEMORY = 256 * MIB
RUNTIME_OVERHEAD = 1.5
PYTHON_STUB_MEMORY = 64 * MIB
TMP_BASE = 256 * MIB
DOWNLOAD_BYTES_PER_S = 50 * 1000 * 1000
PROBE_PERIOD_S = 10
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)i?b?\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Footprint:
    """What one loaded model asks of the pod."""

    name: str
    file_bytes: int
    cpu_instances: int
    threads: int  # intra-op threads of each CPU instance (intra_op_thread_count); 0: the model names none
    gpu_instances: int
    gpus: int  # devices its KIND_GPU groups name (1 when they name none)
    python: bool
    held: dict[str, int] = field(default_factory=dict)  # what each instance holds beyond its files, by its label


@dataclass(frozen=True)
class Sizing:
    """The pod's resources and the startup probe's window."""

    cpu_millis: int
    memory_bytes: int
    shm_bytes: int
    tmp_bytes: int
    gpus: int
    startup_failure_threshold: int
    load_seconds: float


def parse_size(text: str, where: Where) -> int:
    """Bytes of a docker-style size (`1g`, `512m`, `64Mi`), the form of the spec's `deploy.shm_size`."""
    m = _SIZE.match(text)
    if not m:
        raise TritonkitError.at(where, f"{text!r} is not a size", "write a number with k, m or g, e.g. 1g")
    return int(float(m.group(1)) * 1024 ** "bkmg".index((m.group(2) or "b").lower()))


def _loaded_file_bytes(model_dir: Path, config: pb.ModelConfig) -> int:
    versions = {str(v) for v in loaded_versions(config, read_versions(model_dir).found)}
    total = 0
    for entry in model_dir.iterdir():
        if entry.name in NOT_LOADED or (entry.is_dir() and entry.name.isdigit() and entry.name not in versions):
            continue
        files = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        total += sum(p.stat().st_size for p in files)
    return total


def footprint(name: str, config: pb.ModelConfig, model_dir: Path) -> Footprint:
    """One model's demands, with the instances Triton runs (its default count where a group leaves it out)."""
    groups = instance_groups(config)
    gpu_groups = [g for g in groups if g.kind == pb.ModelInstanceGroup.KIND_GPU]
    cpu_instances = sum(group_count(config, g) for g in groups if g not in gpu_groups)
    named = {gpu for g in gpu_groups for gpu in g.gpus}
    return Footprint(name, _loaded_file_bytes(model_dir, config), cpu_instances,
                     int_parameter(config, "intra_op_thread_count"),
                     sum(group_count(config, g) for g in gpu_groups), (len(named) or 1) if gpu_groups else 0,
                     config.backend == "python", held(config))


def held(config: pb.ModelConfig) -> dict[str, int]:
    """What each instance of the model holds beyond its files, as the installed pipelines declare it."""
    found = {m.label: m.bytes(config) for p in installed().values() if (m := p.instance_memory) is not None}
    return {label: size for label, size in found.items() if size}


def size(models: list[Footprint], shm_bytes: int, load_seconds: float, cache_bytes: int = 0) -> Sizing:
    """The pod's resources for serving `models` (the rules are in this module's docstring)."""
    files = sum(m.file_bytes for m in models)
    memory = SERVER_MEMORY + shm_bytes + cache_bytes + sum(
        int(m.file_bytes * RUNTIME_OVERHEAD * (m.cpu_instances + (1 if m.gpu_instances else 0) or 1))
        + (PYTHON_STUB_MEMORY * (m.cpu_instances + m.gpu_instances) if m.python else 0)
        + sum(m.held.values()) * (m.cpu_instances + m.gpu_instances) for m in models)
    window = 3 * load_seconds + files / DOWNLOAD_BYTES_PER_S + 30
    cpu = SERVER_CPU_MILLIS + sum(m.cpu_instances * (CPU_MILLIS_PER_THREAD * m.threads or CPU_INSTANCE_MILLIS)
                                  + GPU_INSTANCE_CPU_MILLIS * m.gpu_instances for m in models)
    return Sizing(cpu, memory, shm_bytes, 2 * files + TMP_BASE, max((m.gpus for m in models), default=0),
                  max(3, math.ceil(window / PROBE_PERIOD_S)), load_seconds)


def mebibytes(n: int) -> str:
    """A Kubernetes quantity in Mi, rounded up."""
    return f"{math.ceil(n / MIB)}Mi"
