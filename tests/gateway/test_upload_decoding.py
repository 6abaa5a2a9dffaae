"""Where /v1/audio/transcriptions decodes an upload: a WAV already at the pipeline's 16 kHz (up to 1 MiB) on the event
loop, since copying its samples costs less than the hop to a worker thread; one to resample in a worker thread, so
the loop goes on meanwhile. Shown by holding the worker threads' only token: a decode sent to a thread waits for it."""
from __future__ import annotations

import asyncio
import io

import anyio
import anyio.to_thread
import numpy as np
import soundfile
from starlette.datastructures import UploadFile

from tritonkit.pipelines.asr.gateway.routes import MODEL_RATE, _decoded


def _wav(rate: int, seconds: float) -> UploadFile:
    samples = (np.sin(np.arange(int(rate * seconds)) / 9) * 0.3).astype(np.float32)
    data = io.BytesIO()
    soundfile.write(data, samples, rate, format="WAV", subtype="PCM_16")
    size = data.tell()
    data.seek(0)
    return UploadFile(data, size=size, filename="clip.wav")


async def _decoded_while_threads_are_held(upload: UploadFile) -> tuple[np.ndarray, float] | None:
    """The decoded upload, or None when decoding waited for a worker thread (none free for 1 s)."""
    limiter = anyio.to_thread.current_default_thread_limiter()
    limiter.total_tokens = 1
    async with limiter:
        try:
            return await asyncio.wait_for(_decoded(upload), 1.0)
        except TimeoutError:
            return None


def test_a_10_s_wav_at_16_khz_is_decoded_on_the_event_loop():
    upload = _wav(MODEL_RATE, 10.0)
    assert upload.size is not None and upload.size > 256 * 1024   # past the old on-loop limit
    decoded = anyio.run(_decoded_while_threads_are_held, upload)
    assert decoded is not None
    pcm, duration = decoded
    assert pcm.shape == (MODEL_RATE * 10,) and duration == 10.0


def test_a_wav_to_resample_is_decoded_in_a_worker_thread():
    assert anyio.run(_decoded_while_threads_are_held, _wav(44100, 1.0)) is None
    pcm, duration = anyio.run(_decoded, _wav(44100, 1.0))   # with the threads free it is decoded there
    assert pcm.size == MODEL_RATE and duration == 1.0
