"""The TTS pipeline behind /v1/audio/speech (decoupled `tts_stream` of tritonkit:ensembles/tts.yaml)."""
from __future__ import annotations

from starlette.routing import Route

from tritonkit.gateway.catalog import GatewayPipeline

ENTRY_MODEL = "tts_stream"


def _routes() -> list[Route]:
    from tritonkit.pipelines.tts.gateway.routes import ROUTES

    return ROUTES


PIPELINE = GatewayPipeline(name="tts", entry_model=ENTRY_MODEL, default_id="tts", routes=_routes)
