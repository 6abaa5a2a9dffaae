"""POST /v1/audio/transcriptions: a multipart upload decoded, mixed to mono and resampled to the pipeline's 16 kHz,
transcribed by the `asr` ensemble (PCM + SAMPLE_RATE -> TRANSCRIPT, WORDS), answered in the asked format or, with
stream=true, as SSE transcript.text.delta events (one per word) and a transcript.text.done."""
from collections.abc import AsyncIterator
from dataclasses import dataclass

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.audio import decode
from tritonkit.gateway.catalog import Served
from tritonkit.gateway.disconnect import unless_disconnected
from tritonkit.gateway.errors import bad_request
from tritonkit.gateway.sse import DONE, event, sse_response
from tritonkit.pipelines.asr.gateway.transcript import FORMATS, Transcript

#: The rate the pipeline's features (and asr_stream) compute on.
MODEL_RATE = 16000
SUPPORTED = {"file", "model", "response_format", "stream", "temperature", "language", "timestamp_granularities[]",
             "timestamp_granularities"}
REFUSED = {"prompt": "the decoder takes no prompt", "include[]": "no log-probabilities",
           "include": "no log-probabilities", "chunking_strategy": "whole files only",
           "known_speaker_names[]": "no diarization"}
#: A WAV already at MODEL_RATE up to this size is decoded on the event loop: no resampling, 16-bit read by `wave` in
#: ~0.06 ms for 10 s of audio (0.24 ms at 1 MiB; libsndfile 0.3 / 1.6 ms), less than the hop to a worker thread
#: (0.3 ms idle, a median 6 ms with the machine at load ~15).
#: Anything else (resampled, compressed, larger) is decoded in a worker thread, so the other requests (LLM streams
#: among them) go on meanwhile: 1 MiB of 44.1 kHz stereo WAV takes 12 ms, a 20 MB upload 0.1-0.4 s.
ON_LOOP_BYTES = 1024 * 1024


def _field(form: dict[str, list], name: str) -> str | None:
    values = form.get(name)
    return values[-1] if values and isinstance(values[-1], str) else None


def _check(form: dict[str, list]) -> None:
    for name, values in form.items():
        if name in REFUSED and any(v not in ("", None) for v in values):
            raise bad_request(f"'{name}' is not supported by this server: {REFUSED[name]}", name,
                              "unsupported_parameter")
        if name not in SUPPORTED and name not in REFUSED:
            raise bad_request(f"Unrecognized request argument supplied: {name}", name, "unknown_parameter")
    temperature = _field(form, "temperature")
    if temperature not in (None, "", "0", "0.0"):
        raise bad_request("'temperature' is not supported by this server: the WFST decoder is deterministic (send 0)",
                          "temperature", "unsupported_parameter")
    language = _field(form, "language")
    if language not in (None, "", "en"):
        raise bad_request(f"'language' {language!r} is not served: this pipeline transcribes English (en)", "language",
                          "unsupported_value")


def _file(form: dict[str, list]) -> UploadFile:
    files = [v for v in form.get("file", []) if isinstance(v, UploadFile)]
    if len(files) != 1:   # also a body cut short inside the file's part: python-multipart drops an unfinished part
        raise bad_request("send one audio file as the multipart field 'file' (the body holds no complete one)", "file",
                          "missing_required_parameter")
    return files[0]


async def _decoded(upload: UploadFile) -> tuple[np.ndarray, float]:
    """The uploaded file at MODEL_RATE, decoded on the event loop when it is a small WAV at that rate (its RIFF header
    says so), else in a worker thread."""
    head = upload.file.read(28) if upload.size is not None and upload.size <= ON_LOOP_BYTES else b""
    upload.file.seek(0)
    if head[:4] == b"RIFF" and head[8:16] == b"WAVEfmt " and int.from_bytes(head[24:28], "little") == MODEL_RATE:
        return decode(upload.file, MODEL_RATE)
    return await run_in_threadpool(decode, upload.file, MODEL_RATE)


async def _form(request: Request) -> FormData:
    """The multipart form; a body python-multipart cannot parse (no boundary, not multipart inside, a part without a
    name, a second file) is OpenAI's 400 rather than Starlette's plain-text one."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise bad_request("send multipart/form-data with the audio as 'file'", "file", "invalid_request")
    try:
        return await request.form(max_files=1, max_fields=32)
    except HTTPException as exc:
        raise bad_request(f"the multipart body cannot be parsed ({exc.detail.rstrip('.')}): send "
                          "multipart/form-data with one audio file as 'file'", "file", "invalid_multipart") from None


async def _deltas(transcript: Transcript) -> AsyncIterator[bytes]:
    words = [w["word"] for w in transcript.words] or ([transcript.text] if transcript.text else [])
    for index, word in enumerate(words):
        yield event({"type": "transcript.text.delta", "delta": word if index == 0 else f" {word}", "logprobs": None})
    yield event({"type": "transcript.text.done", "text": transcript.text, "logprobs": None,
                 "usage": {"type": "duration", "seconds": round(transcript.duration, 3)}})
    yield DONE


@dataclass(frozen=True)
class Upload:
    """A checked transcription request: the model it names, how to answer, and its audio at MODEL_RATE."""

    served: Served
    response_format: str
    stream: bool
    granularities: set[str]
    pcm: np.ndarray
    duration: float


async def read_upload(request: Request) -> Upload:
    """The multipart form parsed, checked and its file decoded; a 400 naming the field when something is wrong."""
    parsed = await _form(request)
    try:
        form: dict[str, list] = {}
        for key, value in parsed.multi_items():
            form.setdefault(key, []).append(value)
        _check(form)
        served = await gateway_of(request).served(_field(form, "model"), "asr")
        response_format = _field(form, "response_format") or "json"
        if response_format not in FORMATS:
            raise bad_request(f"'response_format' must be one of {', '.join(FORMATS)}, got '{response_format}'",
                              "response_format", "invalid_value")
        stream = (_field(form, "stream") or "false").lower() == "true"
        granularities = {v for key in ("timestamp_granularities[]", "timestamp_granularities")
                         for v in form.get(key, [])}
        pcm, duration = await _decoded(_file(form))
    finally:
        await parsed.close()
    return Upload(served, response_format, stream, granularities, pcm, duration)


def answer(upload: Upload, transcript: Transcript) -> Response:
    """`transcript` in the format the upload asked for (SSE word deltas with stream=true)."""
    if upload.stream:
        return sse_response(_deltas(transcript))
    if upload.response_format == "json":
        usage = {"type": "duration", "seconds": round(transcript.duration, 3)}
        return JSONResponse({"text": transcript.text, "usage": usage})
    if upload.response_format == "verbose_json":
        return JSONResponse(transcript.verbose(upload.granularities))
    if upload.response_format == "text":
        return PlainTextResponse(transcript.text + "\n")
    vtt = upload.response_format == "vtt"
    return PlainTextResponse(transcript.subtitles(vtt=vtt), media_type="text/vtt" if vtt else "application/x-subrip")


async def transcriptions(request: Request) -> Response:
    upload = await read_upload(request)
    result = await unless_disconnected(request, gateway_of(request).triton.infer(
        upload.served.model, {"PCM": upload.pcm, "SAMPLE_RATE": np.array([MODEL_RATE], dtype=np.int32)}))
    return answer(upload, Transcript(result.as_numpy("TRANSCRIPT").reshape(-1)[0].decode("utf-8"),
                                     result.as_numpy("WORDS").reshape(-1)[0].decode("utf-8"), upload.duration))


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/audio/transcriptions": transcriptions}
