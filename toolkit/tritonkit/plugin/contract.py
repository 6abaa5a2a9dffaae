"""The contract between tritonkit's core and a pipeline: everything a pipeline may contribute, as one `Pipeline`.

A pipeline is one folder whose `plugin.py` declares `PIPELINE = Pipeline(...)` (the shipped ones live in
`tritonkit/pipelines/<name>/`, their starter project in `starter/` beside it). A registry lists them, one line each,
and an entry point installs it (`host.py`); the core calls the hooks below and names no pipeline, no tensor, no
parameter and no route of one. A plugin module imports no heavy package (torch, kaldifst, kokoro, starlette): its
hooks import them when they run.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from tritonkit.spec.base import StrictModel

if TYPE_CHECKING:
    from tritonkit.errors import Where
    from tritonkit.spec.project import Project
    from tritonkit.triton.model_config import pb
    from tritonkit.tune.targets.engine import Engine


class Section(StrictModel):
    """A pipeline's own section of a model spec, `models.<model>.<pipeline>:`, for fields only it uses."""

    def provides(self) -> tuple[str, ...]:
        """Names the pipeline's build step puts in the model's version folder (`model:<it>/<name>` is checked at
        load)."""
        return ()

    def read_paths(self) -> dict[str, str]:
        """{field inside the section: path as written} of the files the build step reads (kept inside the project)."""
        return {}


S = TypeVar("S", bound=Section)


@dataclass(frozen=True)
class Made:
    """What a build step made for one model: files for its version folder and what `build` reports of it."""

    files: dict[str, Path]   # name in the version folder -> file or folder (the spec's own `files` of a name win)
    summary: object          # `build --json`, under the step's key and the model's name
    line: str = ""           # what `tritonkit build` prints of it ("" for nothing)


@dataclass(frozen=True)
class BuildStep(Generic[S]):
    """Makes files for each model with the pipeline's section; runs after loading, before exports."""

    key: str   # `build --json`'s key for what it made, e.g. "graphs"
    run: Callable[[str, S, Project], Made]   # (model name, its section, the project)


@dataclass(frozen=True)
class OwnModel:
    """`tritonkit init --model PATH`: the starter made to serve a model of the user's own."""

    check: Callable[[Path], None]   # refuses (TritonkitError) a model the pipeline cannot serve, before any write
    write: Callable[[Path, Path], list[Path]]   # (project, model) -> files written, after the starter's copies


@dataclass(frozen=True)
class Starter:
    """What `tritonkit init` needs beyond copying `starter/`: requirements, generated files, shared code.

    The starter's `tritonkit.yaml` carries the pipeline's smoke cases (`smoke:`), its known answers."""

    needs: dict[str, str] = field(default_factory=dict)  # importable module -> what to install for it
    generate: Callable[[Path], list[Path]] | None = None  # files written by code (after the copies), may need `needs`
    generate_command: str = ""  # how the user writes those files later, when `needs` were missing at init
    copies: dict[str, str] = field(default_factory=dict)  # project path -> package file: shipped code the user edits
    libraries: dict[str, str] = field(default_factory=dict)  # shared library a model loads -> Debian package with it
    note: str = ""  # what its answers look like when that would surprise (init prints it)
    own_model: OwnModel | None = None  # None: `init --model` is refused for this starter


Endpoint = Callable[[Any], Any]   # a starlette endpoint: request -> response (async)


@dataclass(frozen=True)
class Routes:
    """The OpenAI routes a pipeline serves in the gateway, by path, and the Triton model they call.

    The gateway makes a POST route of each path with the endpoint `endpoints()` gives it; the spec's
    `gateway.models.<id>.pipeline` offers the pipelines that have routes."""

    paths: tuple[str, ...]   # e.g. ("/v1/audio/speech",)
    entry_model: str         # the Triton model the routes call unless the spec names another
    default_id: str          # the model id it is offered under when the spec names none
    endpoints: Callable[[], Mapping[str, Endpoint]]   # path -> endpoint, imported when the gateway starts
    entry_note: str = ""     # what the spec reference adds to the entry model's name, e.g. "the engine"


Q = TypeVar("Q", bound=StrictModel)


@dataclass(frozen=True)
class QuantizeCheck(Generic[Q]):
    """How a pipeline judges a weight-only quantized graph against its float one: its section of
    `export.quantize`, the measure the export child runs on both graphs, and the build log's words on the result."""

    field: str   # the section's key under `export.quantize`, e.g. "lm"
    section: type[Q]
    description: str   # the section's description in the schema
    progress: str   # the export's progress line while it measures
    reads: Callable[[Q], list[str]]   # files, relative to the project, the measure reads (the export's cache key)
    #: (float onnx, quantized onnx, the section, project folder, where) -> the measures; raises below the bounds
    measure: Callable[[Path, Path, Q, Path, Where], dict[str, Any]]
    line: Callable[[dict[str, Any]], str]   # the measures as the build log appends them to the quantized line


@dataclass(frozen=True)
class InstanceMemory:
    """Memory each instance of one of the pipeline's models holds beyond its files (a KV-cache pool): what a pod
    deploying it must request."""

    label: str   # how the Deployment's sizing note names it, e.g. "kv"
    bytes: Callable[[pb.ModelConfig], int]   # per instance; 0 for a model that is not the pipeline's


@dataclass(frozen=True)
class Pipeline(Generic[S]):
    """A pipeline as the core sees it; every part but the name and description is optional."""

    name: str   # its folder's name, `init --pipeline` value, spec section key and gateway pipeline name
    description: str   # one line, shown by `tritonkit init --help` and the spec reference
    starter: Starter | None = None   # None: no `starter/` folder
    section: type[S] | None = None   # the model spec's `<name>:` section
    old_fields: dict[str, str] = field(default_factory=dict)  # model field of earlier releases -> its section key
    build: BuildStep[S] | None = None
    quantize: QuantizeCheck[Any] | None = None
    gateway: Routes | None = None
    #: the engine its pipelines run, which `tune --joint` searches and measures its own way
    tuning: Engine | None = None
    instance_memory: InstanceMemory | None = None
