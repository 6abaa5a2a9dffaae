"""POST /v1/audio/speech: `input` spoken by `tts_stream`, one response per sentence, each sent on as it arrives
(wav with a streaming header, or raw 16-bit pcm); flac, mp3 and opus are encoded once the last sentence is in.

What the gateway knows of the pipeline: `tts_stream` takes text, optional voice and speed, and streams audio
(float32 PCM) with its sample_rate; it refuses an unknown voice or a speed out of range itself (a 400 here).
"""
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.audio import MEDIA_TYPES, STREAMED_FORMATS, WHOLE_FORMATS, encode_whole, pcm16, wav_stream_header
from tritonkit.gateway.disconnect import StreamedResponse, unless_disconnected
from tritonkit.gateway.errors import bad_request
from tritonkit.gateway.params import Body, refused_unless

SUPPORTED = {"model", "input", "voice", "speed", "response_format"}
REFUSALS = {"instructions": refused_unless(lambda v: not v, "this model takes no instructions"),
            "stream_format": refused_unless(lambda v: v == "audio", "audio only (no SSE)")}
MAX_INPUT_CHARS = 4096   # OpenAI's limit; the pipeline's own (max_chars) applies too


def _audio(result: Any) -> tuple[np.ndarray, int]:
    return result.as_numpy("audio").reshape(-1), int(result.as_numpy("sample_rate").reshape(-1)[0])


def _inputs(text: str, voice: str | None, speed: float | None) -> dict[str, np.ndarray]:
    inputs = {"text": np.array([text.encode("utf-8")], dtype=np.object_)}
    if voice:
        inputs["voice"] = np.array([voice.encode("utf-8")], dtype=np.object_)
    if speed is not None:
        inputs["speed"] = np.array([speed], dtype=np.float32)
    return inputs


async def _streamed(responses: AsyncGenerator[Any, None], first: Any, response_format: str) -> AsyncIterator[bytes]:
    async with aclosing(responses):  # the client leaving cancels the sentences not yet synthesized
        audio, rate = _audio(first)
        if response_format == "wav":
            yield wav_stream_header(rate)
        yield pcm16(audio)
        async for result in responses:
            yield pcm16(_audio(result)[0])


async def speech(request: Request) -> Response:
    gateway = gateway_of(request)
    body = Body.parse(await request.body())
    body.check_names(SUPPORTED, REFUSALS)
    served = await gateway.served(body.get("model"), "tts")
    text = body.string("input", required=True) or ""
    if not text.strip() or len(text) > MAX_INPUT_CHARS:
        raise bad_request(f"'input' must hold 1 to {MAX_INPUT_CHARS} characters, got {len(text)}", "input",
                          "invalid_value")
    response_format = body.choice("response_format", (*STREAMED_FORMATS, *WHOLE_FORMATS), "mp3")
    inputs = _inputs(text, body.string("voice"), body.number("speed", 0.25, 4.0))
    responses = gateway.triton.stream(served.model, inputs)
    if response_format in STREAMED_FORMATS:
        first = await unless_disconnected(request, anext(responses))   # a refused request is a 400 before any audio
        return StreamedResponse(_streamed(responses, first, response_format), media_type=MEDIA_TYPES[response_format])

    async def whole() -> tuple[np.ndarray, int]:
        parts: list[np.ndarray] = []
        rate = 0
        async with aclosing(responses):
            async for result in responses:
                audio, rate = _audio(result)
                parts.append(audio)
        return np.concatenate(parts) if parts else np.zeros(0, np.float32), rate

    audio, rate = await unless_disconnected(request, whole())
    return Response(encode_whole(audio, rate, response_format), media_type=MEDIA_TYPES[response_format])


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/audio/speech": speech}
