"""What the gateway offers: model ids, each naming the pipeline that serves it and the Triton model it calls."""
from collections.abc import Mapping
from dataclasses import dataclass, field

from tritonkit.plugin.contract import Routes


@dataclass(frozen=True)
class Served:
    """One model id of /v1/models: `pipeline` serves it by calling Triton's `model`."""

    id: str
    pipeline: str
    model: str


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the app needs, resolved from the spec's `gateway:` section and the command line."""

    triton_url: str
    pipelines: Mapping[str, Routes] = field(default_factory=dict)   # those with routes, by name: what it serves
    repository: str = "model_repository"   # what Triton serves, a folder or s3:// (pipelines read model files there)
    models: tuple[Served, ...] = ()   # empty: every pipeline whose entry model Triton serves, under its default id
    api_keys: frozenset[str] = field(default_factory=frozenset)
    max_request_bytes: int = 25 * 1024 * 1024


def default_catalog(pipelines: Mapping[str, Routes], ready: set[str]) -> tuple[Served, ...]:
    """Each pipeline whose entry model is ready, under its default id."""
    return tuple(Served(r.default_id, name, r.entry_model) for name, r in pipelines.items() if r.entry_model in ready)
