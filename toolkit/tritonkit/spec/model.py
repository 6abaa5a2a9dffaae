"""One model of the spec: Triton's ModelConfig fields plus where the model's files come from."""
from __future__ import annotations

import ipaddress
import re
from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from tritonkit.spec.base import StrictModel, env_variable
from tritonkit.spec.bls import BlsSpec
from tritonkit.spec.export import ExportSpec, SourceSpec
from tritonkit.spec.instances import InstanceGroup, VersionPolicy
from tritonkit.spec.limits import DeployLimits
from tritonkit.spec.optimization import Optimization
from tritonkit.spec.scheduling import DynamicBatching, EnsembleScheduling, SequenceBatching
from tritonkit.spec.smoke import SmokeCase
from tritonkit.spec.tensors import BatchInput, BatchOutput, TensorInput, TensorOutput
from tritonkit.spec.warmup import Warmup
from tritonkit.triton.model_graph import BLS_CALLS_PARAMETER

ParameterValue = str | int | float | bool
#: Debian policy 5.6.1: lowercase letters, digits, '+', '-', '.'; two characters at least, the first alphanumeric.
_DEBIAN_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+")


class TransactionPolicy(StrictModel):
    """Decoupled models send zero, one or many responses per request (streaming)."""

    decoupled: bool = False


class ResponseCache(StrictModel):
    """Triton's response cache for this model (the server needs `--cache-config`)."""

    enable: bool = True


class ModelSpec(StrictModel):
    """A model as the user describes it; renders to `<name>/config.pbtxt` and `<name>/<version>/` (plus its
    pipeline sections)."""

    platform: str | None = Field(default=None, description="e.g. onnxruntime_onnx, tensorrt_plan, ensemble")
    backend: str | None = Field(default=None, description="e.g. python, onnxruntime, tensorrt, pytorch")
    runtime: str | None = None
    max_batch_size: int = Field(default=0, ge=0)
    default_model_filename: str | None = None
    cc_model_filenames: dict[str, str] = Field(
        default_factory=dict, description="Model file per GPU compute capability, e.g. {'8.0': model_a100.plan}; a "
        "file of every version folder (add it to files).")
    input: list[TensorInput] = Field(default_factory=list)
    output: list[TensorOutput] = Field(default_factory=list)
    batch_input: list[BatchInput] = Field(default_factory=list)
    batch_output: list[BatchOutput] = Field(default_factory=list)
    version_policy: VersionPolicy | None = None
    instance_group: list[InstanceGroup] = Field(default_factory=list)
    dynamic_batching: DynamicBatching | None = None
    sequence_batching: SequenceBatching | None = None
    ensemble_scheduling: EnsembleScheduling | None = None
    model_transaction_policy: TransactionPolicy | None = None
    model_warmup: list[Warmup] = Field(default_factory=list)
    response_cache: ResponseCache | None = None
    parameters: dict[str, ParameterValue] = Field(default_factory=dict)
    optimization: Optimization | None = None
    bls: BlsSpec | None = Field(default=None, description="Models this Python model calls (BLS); checked, and written "
                                "as parameter bls_calls.")

    source: SourceSpec | None = Field(default=None, description="A PyTorch/TorchScript/ONNX model that the "
                                      "build exports and verifies.")
    export: ExportSpec | None = Field(default=None, description="How `source` is exported and verified "
                                      "(defaults apply when omitted).")
    files: dict[str, str] = Field(default_factory=dict, description="Files copied into each version directory: {name "
                                  "in version dir: path relative to the spec}. A folder is copied whole; "
                                  "`tritonkit:<path>` names a file or folder inside the tritonkit package; "
                                  "`model:<model>/<file>` copies a file another model's build put in its latest "
                                  "version folder (each model reads only its own folder: Triton from s3:// downloads "
                                  "every model apart); a list keeps each file's own name.")
    versions: list[int] = Field(default_factory=lambda: [1], min_length=1, description="Version directories to write.")
    version_files: dict[int, dict[str, str]] = Field(default_factory=dict, description="Files of single versions, "
                                                     "{version: {name in version dir: path}}, on top of `files` (same "
                                                     "name: this one wins); e.g. an imported repository whose "
                                                     "versions hold different model.py files.")
    smoke: list[SmokeCase] = Field(default_factory=list, description="Known-answer cases saved as golden samples "
                                   "for `tritonkit smoke`.")
    requirements: list[str] = Field(default_factory=list, description="pip packages a Python model needs beyond numpy "
                                    "(goes into the Dockerfile).")
    system_packages: list[str] = Field(
        default_factory=list,
        description="Debian/Ubuntu packages a Python model needs beyond the Triton image, unpinned names (apt-get "
        "install --no-install-recommends in the generated tritonkit.Dockerfile), e.g. [libespeak-ng1].",
        json_schema_extra={"items": {"type": "string",
                                     "pattern": f"^{_DEBIAN_PACKAGE.pattern}$"}},   # editors flag bad names too
    )

    @field_validator("files", mode="before")
    @classmethod
    def _files_from_list(cls, value: object) -> object:
        return {PurePosixPath(str(p)).name: p for p in value} if isinstance(value, list) else value

    @model_validator(mode="after")
    def _one_scheduler(self) -> ModelSpec:
        chosen = [n for n in ("dynamic_batching",
                              "sequence_batching", "ensemble_scheduling") if getattr(self, n) is not None]
        if len(chosen) > 1:
            raise ValueError(f"{' and '.join(chosen)} exclude each other in Triton; keep one")
        return self

    @model_validator(mode="after")
    def _bls_owns_its_parameter(self) -> ModelSpec:
        if self.bls is not None and BLS_CALLS_PARAMETER in self.parameters:
            raise ValueError(f"parameters.{BLS_CALLS_PARAMETER} is written from bls.calls; remove it from parameters")
        return self

    @field_validator("system_packages")
    @classmethod
    def _debian_package_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _DEBIAN_PACKAGE.fullmatch(name):
                raise ValueError(f"{name!r} is not a Debian package name; write the bare name (lowercase letters, "
                                 "digits, '+', '-', '.', no version or options), e.g. libespeak-ng1")
        return value

    @field_validator("versions")
    @classmethod
    def _positive_versions(cls, value: list[int]) -> list[int]:
        if any(v < 1 for v in value) or len(set(value)) != len(value):
            raise ValueError(f"versions {value} are not distinct positive integers; list each "
                             "version once, e.g. [1, 2]")
        return value

    @model_validator(mode="after")
    def _version_files_of_listed_versions(self) -> ModelSpec:
        unknown = sorted(set(self.version_files) - set(self.versions))
        if unknown:
            raise ValueError(f"version_files names version {unknown[0]}, which is not in versions {self.versions}; add "
                             "it to versions or remove its files")
        return self

    def files_of(self, version: int) -> dict[str, str]:
        """What goes into one version directory: `files` plus that version's own `version_files`."""
        return {**self.files, **self.version_files.get(version, {})}


class DeploySpec(StrictModel):
    """How `docker-compose.yml` runs the official Triton container."""

    image: str = "nvcr.io/nvidia/tritonserver:24.10-py3"
    tensorrt_image: str = Field(default="nvcr.io/nvidia/tensorrt:24.10-py3", description="Runs trtexec for `tensorrt: "
                                "{mode: deferred}` models before Triton starts.")
    http_port: int = Field(default=8000, ge=1, le=65535)
    grpc_port: int = Field(default=8001, ge=1, le=65535)
    metrics_port: int = Field(default=8002, ge=1, le=65535)
    bind_address: str = Field(default="127.0.0.1", description="Host address the HTTP, gRPC and metrics ports are "
                              "published on; 0.0.0.0 publishes on every interface.")
    model_control_mode: Literal["none", "poll", "explicit"] = "none"
    load_models: list[str] | None = Field(default=None, description="Explicit mode: the models loaded at "
                                          "startup (default: all). Each one's ensemble steps and declared BLS "
                                          "callees are added, transitively, because Triton loads a BLS model's "
                                          "callees only when told to.")
    admin_key_env: Annotated[str, env_variable("TRITON_ADMIN_KEY")] = Field(
        default="TRITON_ADMIN_KEY", description="Explicit mode: environment variable holding the key that model "
        "load/unload requests must send in the `admin-key` header; read by `docker compose up`, never written to a "
        "file.")
    shm_size: str = "1g"
    user: str = "1000:1000"
    log_verbose: int = Field(default=0, ge=0)
    cache_size_bytes: int = Field(default=0,
                                  ge=0, description="Response cache size; 0 = off unless a model enables it.")
    limits: DeployLimits = Field(default_factory=DeployLimits, description="Bounds on waiting requests, applied "
                                 "to the built repository.")

    @field_validator("bind_address")
    @classmethod
    def _ip_address(cls, value: str) -> str:
        try:
            ipaddress.ip_address(value)
        except ValueError:
            raise ValueError(f"bind_address {value!r} is not an IP address; use 127.0.0.1 (this host only) or "
                             "0.0.0.0 (every interface)") from None
        return value
