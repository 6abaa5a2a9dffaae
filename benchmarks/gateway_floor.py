"""The gateway's floors: its own app stack (uvicorn as `tritonkit gateway` runs it, the Guard, Starlette) with
nothing of its OpenAI routes' work, so benchmarks/gateway.py can measure what that stack costs alone beside the
gateway and the direct ways.

- /v1/audio/transcriptions: the gateway's own request handling (the multipart form parsed and checked, the file
  decoded and resampled, the answer rendered) with a fixed transcript in place of the Triton call: what HTTP,
  multipart and decoding cost.
- /floor/generate (when a Triton gRPC URL is given): the hop alone. A prompt's ids (encoded by the caller) and
  max_tokens go as one greedy request to `generate` through the gateway's own Triton client (its kept gRPC streams)
  and each response's text comes back as an SSE event, sent as the gateway sends its streams: no request checks,
  no chat template, no tokenizer, no OpenAI chunks. Its time to first text over Triton's own HTTP stream is the
  least a second process on this stack adds.

Usage: python benchmarks/gateway_floor.py PORT [TRITON_GRPC_URL]
"""
from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tritonkit.gateway.app import create_app, gateway_of
from tritonkit.gateway.catalog import GatewayConfig, Served
from tritonkit.gateway.guard import Guard
from tritonkit.gateway.protocol import Route as RequestRoute
from tritonkit.gateway.server import serve_app
from tritonkit.gateway.sse import DONE, event, sse_response
from tritonkit.pipelines.asr.gateway.protocol import TranscriptionRequest
from tritonkit.pipelines.asr.gateway.routes import answer, decoded
from tritonkit.pipelines.asr.gateway.transcript import Transcript
from tritonkit.pipelines.llm.gateway.model import ENTRY_MODEL, OUTPUTS, Sampling, Step, request_inputs

PATH = "/v1/audio/transcriptions"
RELAY_PATH = "/floor/generate"
TEXT = "open the menu"
WORDS = '[{"word": "open", "start_s": 0.1, "end_s": 0.4}, {"word": "the", "start_s": 0.4, "end_s": 0.5}, ' \
        '{"word": "menu", "start_s": 0.5, "end_s": 0.9}]'


async def transcribed(request: Request, body: TranscriptionRequest) -> Response:
    """The route's own request checks and decoding, a fixed transcript in place of Triton's."""
    try:
        _, duration = await decoded(body.file)
    finally:
        await body.file.close()
    return answer(body, Transcript(TEXT, WORDS, duration))


floor = RequestRoute(TranscriptionRequest, transcribed).serve


async def relay(request: Request) -> Response:
    """{"ids": [...], "max_tokens": n} -> `data: {"text", "tokens"}` per response of `generate`, then [DONE]."""
    body = json.loads(await request.body())
    inputs = request_inputs(np.asarray(body["ids"]), Sampling(max_tokens=body["max_tokens"], temperature=0.0))
    responses = gateway_of(request).triton.stream(ENTRY_MODEL, inputs, OUTPUTS)

    async def events() -> AsyncIterator[bytes]:
        async for result in responses:
            step = Step.of(result)
            yield event({"text": step.text, "tokens": step.tokens})
        yield DONE
    return sse_response(events())


def floor_app(triton_url: str) -> Guard:
    """The gateway's app (no pipeline's routes) with the transcription route answered by `floor` and the relay beside
    (a given catalog: Triton is not asked which models it serves)."""
    guard = create_app(GatewayConfig(triton_url=triton_url, models=(Served("asr", "asr", "asr"),)))
    app = guard.app
    assert isinstance(app, Starlette)
    app.router.routes += [Route(PATH, floor, methods=["POST"]), Route(RELAY_PATH, relay, methods=["POST"])]
    return guard


if __name__ == "__main__":
    serve_app(floor_app(sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1:1"), "127.0.0.1", int(sys.argv[1]))
