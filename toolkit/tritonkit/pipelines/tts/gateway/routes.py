"""POST /v1/audio/speech: `input` spoken by `tts_stream`, one response per sentence, each sent on as it arrives
(wav with a streaming header, or raw 16-bit pcm); flac, mp3 and opus are encoded once the last sentence is in.

What the gateway knows of the pipeline: `tts_stream` takes text, optional voice and speed, and streams audio
(float32 PCM) with its sample_rate; it refuses an unknown voice or a speed out of range itself (a 400 here, naming
`voice` with OpenAI's names besides the model's own).
"""
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any

import numpy as np
from starlette.requests import Request
from starlette.responses import Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.audio import MEDIA_TYPES, STREAMED_FORMATS, encode_whole, pcm16, wav_stream_header
from tritonkit.gateway.disconnect import StreamedResponse, unless_disconnected
from tritonkit.gateway.errors import ApiError, bad_request
from tritonkit.gateway.protocol import Route
from tritonkit.pipelines.tts.gateway.protocol import OPENAI_VOICES, SpeechRequest


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


def _voice_refused(error: ApiError, voice: str | None) -> ApiError:
    """The pipeline's refusal of a voice as a 400 naming `voice`, with OpenAI's names it also takes."""
    if error.status != 400 or "unknown voice" not in error.message:
        return error
    own = error.message.rpartition("; ")[2] or error.message   # "choose one of jf_alpha, ..."
    return bad_request(f"'voice' {voice!r} is unknown: {own}, or one of OpenAI's names "
                       f"({', '.join(OPENAI_VOICES)})", "voice", "invalid_value")


async def speech(request: Request, body: SpeechRequest) -> Response:
    try:
        return await _speech(request, body)
    except ApiError as error:
        raise _voice_refused(error, body.voice) from None


async def _speech(request: Request, body: SpeechRequest) -> Response:
    gateway = gateway_of(request)
    served = await gateway.served(body.model, "tts")
    response_format = body.response_format or "mp3"
    responses = gateway.triton.stream(served.model, _inputs(body.input, body.pipeline_voice, body.speed))
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
ENDPOINTS = {"/v1/audio/speech": Route(SpeechRequest, speech).serve}
