"""The ASR pipeline behind /v1/audio/transcriptions (ensemble `asr` of tritonkit:ensembles/asr.yaml)."""
from __future__ import annotations

from starlette.routing import Route

from tritonkit.gateway.catalog import GatewayPipeline

ENTRY_MODEL = "asr"


def _routes() -> list[Route]:
    from tritonkit.pipelines.asr.gateway.routes import ROUTES

    return ROUTES


PIPELINE = GatewayPipeline(name="asr", entry_model=ENTRY_MODEL, default_id="asr", routes=_routes)
