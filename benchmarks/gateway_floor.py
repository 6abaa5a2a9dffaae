"""The gateway's floor for /v1/audio/transcriptions: the gateway's own app stack (uvicorn as `tritonkit gateway`
runs it, the Guard, Starlette) and its own request handling (the multipart form parsed and checked, the file
decoded and resampled, the answer rendered) with a fixed transcript in place of the Triton call. Its latency is what
HTTP, multipart and decoding cost alone; benchmarks/gateway.py measures it beside the gateway and direct gRPC.

Usage: python benchmarks/gateway_floor.py PORT
"""
from __future__ import annotations

import sys

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tritonkit.gateway.app import create_app
from tritonkit.gateway.catalog import GatewayConfig, Served
from tritonkit.gateway.guard import Guard
from tritonkit.gateway.server import serve_app
from tritonkit.pipelines.asr.gateway.routes import answer, read_upload
from tritonkit.pipelines.asr.gateway.transcript import Transcript

PATH = "/v1/audio/transcriptions"
TEXT = "open the menu"
WORDS = '[{"word": "open", "start_s": 0.1, "end_s": 0.4}, {"word": "the", "start_s": 0.4, "end_s": 0.5}, ' \
        '{"word": "menu", "start_s": 0.5, "end_s": 0.9}]'


async def floor(request: Request) -> Response:
    upload = await read_upload(request)
    return answer(upload, Transcript(TEXT, WORDS, upload.duration))


def floor_app() -> Guard:
    """The gateway's app with the transcription route answered by `floor` (a given catalog: Triton is not asked)."""
    guard = create_app(GatewayConfig(triton_url="127.0.0.1:1", models=(Served("asr", "asr", "asr"),)))
    app = guard.app
    assert isinstance(app, Starlette)
    app.router.routes = [Route(PATH, floor, methods=["POST"]) if isinstance(r, Route) and r.path == PATH else r
                         for r in app.router.routes]
    return guard

if __name__ == "__main__":
    serve_app(floor_app(), "127.0.0.1", int(sys.argv[1]))
