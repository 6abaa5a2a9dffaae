"""POST /v1/audio/transcriptions: a multipart upload decoded, mixed to mono and resampled to the pipeline's 16 kHz,
transcribed by the `asr` ensemble (PCM + SAMPLE_RATE -> TRANSCRIPT, WORDS), answered in the asked format or, with
stream=true, as SSE transcript.text.delta events (one per word) and a transcript.text.done."""
from collections.abc import AsyncIterator

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.audio import decode
from tritonkit.gateway.disconnect import unless_disconnected
from tritonkit.gateway.protocol import Route
from tritonkit.gateway.sse import DONE, event, sse_response
from tritonkit.pipelines.asr.gateway.protocol import TranscriptionRequest
from tritonkit.pipelines.asr.gateway.transcript import Transcript

#: The rate the pipeline's features (and asr_stream) compute on.
MODEL_RATE = 16000
#: A WAV already at MODEL_RATE up to this size is decoded on the event loop: no resampling, 16-bit read by `wave` in
#: ~0.06 ms for 10 s of audio (0.24 ms at 1 MiB; libsndfile 0.3 / 1.6 ms), less than the hop to a worker thread
#: (0.3 ms idle, a median 6 ms with the machine at load ~15).
#: Anything else (resampled, compressed, larger) is decoded in a worker thread, so the other requests (LLM streams
#: among them) go on meanwhile: 1 MiB of 44.1 kHz stereo WAV takes 12 ms, a 20 MB upload 0.1-0.4 s.
ON_LOOP_BYTES = 1024 * 1024


async def decoded(upload: UploadFile) -> tuple[np.ndarray, float]:
    """The uploaded file at MODEL_RATE, decoded on the event loop when it is a small WAV at that rate (its RIFF header
    says so), else in a worker thread."""
    head = upload.file.read(28) if upload.size is not None and upload.size <= ON_LOOP_BYTES else b""
    upload.file.seek(0)
    if head[:4] == b"RIFF" and head[8:16] == b"WAVEfmt " and int.from_bytes(head[24:28], "little") == MODEL_RATE:
        return decode(upload.file, MODEL_RATE)
    return await run_in_threadpool(decode, upload.file, MODEL_RATE)


async def _deltas(transcript: Transcript) -> AsyncIterator[bytes]:
    words = [w["word"] for w in transcript.words] or ([transcript.text] if transcript.text else [])
    for index, word in enumerate(words):
        yield event({"type": "transcript.text.delta", "delta": word if index == 0 else f" {word}", "logprobs": None})
    yield event({"type": "transcript.text.done", "text": transcript.text, "logprobs": None,
                 "usage": {"type": "duration", "seconds": round(transcript.duration, 3)}})
    yield DONE


def answer(upload: TranscriptionRequest, transcript: Transcript) -> Response:
    """`transcript` in the format the request asked for (SSE word deltas with stream=true)."""
    if upload.stream:
        return sse_response(_deltas(transcript))
    if upload.response_format == "json":
        usage = {"type": "duration", "seconds": round(transcript.duration, 3)}
        return JSONResponse({"text": transcript.text, "usage": usage})
    if upload.response_format == "verbose_json":
        return JSONResponse(transcript.verbose(set(upload.timestamp_granularities)))
    if upload.response_format == "text":
        return PlainTextResponse(transcript.text + "\n")
    vtt = upload.response_format == "vtt"
    return PlainTextResponse(transcript.subtitles(vtt=vtt), media_type="text/vtt" if vtt else "application/x-subrip")


async def transcriptions(request: Request, body: TranscriptionRequest) -> Response:
    gateway = gateway_of(request)
    try:
        served = await gateway.served(body.model, "asr")
        pcm, duration = await decoded(body.file)
    finally:
        await body.file.close()
    result = await unless_disconnected(request, gateway.triton.infer(
        served.model, {"PCM": pcm, "SAMPLE_RATE": np.array([MODEL_RATE], dtype=np.int32)}))
    return answer(body, Transcript(result.as_numpy("TRANSCRIPT").reshape(-1)[0].decode("utf-8"),
                                   result.as_numpy("WORDS").reshape(-1)[0].decode("utf-8"), duration))


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/audio/transcriptions": Route(TranscriptionRequest, transcriptions).serve}
