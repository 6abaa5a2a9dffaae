"""The LLM pipeline behind /v1/chat/completions and /v1/completions (ensemble `llm` of tritonkit:ensembles/llm.yaml)."""
from __future__ import annotations

from tritonkit.gateway.catalog import GatewayPipeline
from tritonkit.pipelines.llm.gateway.model import ENTRY_MODEL


def _routes() -> list:
    from tritonkit.pipelines.llm.gateway.routes import ROUTES

    return ROUTES


PIPELINE = GatewayPipeline(name="llm", entry_model=ENTRY_MODEL, default_id="llm", routes=_routes)
