"""What the gateway offers: model ids, each naming the pipeline that serves it and the Triton model it calls."""
from dataclasses import dataclass, field

from starlette.routing import Route


@dataclass(frozen=True)
class Served:
    """One model id of /v1/models: `pipeline` (llm, tts, asr) serves it by calling Triton's `model`."""

    id: str
    pipeline: str
    model: str


@dataclass(frozen=True)
class GatewayPipeline:
    """What a pipeline brings to the gateway: the Triton model it calls by default, the id it is offered under when
    the spec names none, and its routes."""

    name: str
    entry_model: str
    default_id: str
    routes: list[Route]


@dataclass(frozen=True)
class GatewayConfig:
    """Everything the app needs, resolved from the spec's `gateway:` section and the command line."""

    triton_url: str
    repository: str = "model_repository"   # what Triton serves, a folder or s3:// (the LLM's tokenizer is read there)
    models: tuple[Served, ...] = ()   # empty: every pipeline whose entry model Triton serves, under its default id
    api_keys: frozenset[str] = field(default_factory=frozenset)
    max_request_bytes: int = 25 * 1024 * 1024


def default_catalog(pipelines: dict[str, GatewayPipeline], ready: set[str]) -> tuple[Served, ...]:
    """Each pipeline whose entry model is ready, under its default id."""
    return tuple(Served(p.default_id, p.name, p.entry_model) for p in pipelines.values() if p.entry_model in ready)
