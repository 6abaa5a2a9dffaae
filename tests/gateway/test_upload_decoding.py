"""Where and how /v1/audio/transcriptions decodes an upload: a WAV already at the pipeline's 16 kHz (up to 1 MiB) on the
event loop, since copying its samples costs less than the hop to a worker thread; one to resample in a worker thread,
so the loop goes on meanwhile (shown by holding the worker threads' only token: a decode sent to a thread waits for
it); 16-bit PCM WAV by the standard library, the rest by libsndfile."""
from __future__ import annotations

import asyncio
import io

import anyio
import anyio.to_thread
import numpy as np
import pytest
import soundfile
from starlette.datastructures import UploadFile

from tritonkit.gateway.audio import _pcm16_wav, decode
from tritonkit.gateway.errors import ApiError
from tritonkit.pipelines.asr.gateway.routes import MODEL_RATE, decoded


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
            return await asyncio.wait_for(decoded(upload), 1.0)
        except TimeoutError:
            return None


def test_a_10_s_wav_at_16_khz_is_decoded_on_the_event_loop():
    upload = _wav(MODEL_RATE, 10.0)
    assert upload.size is not None and upload.size > 256 * 1024   # past 256 KiB: still on the loop
    result = anyio.run(_decoded_while_threads_are_held, upload)
    assert result is not None
    pcm, duration = result
    assert pcm.shape == (MODEL_RATE * 10,) and duration == 10.0


def test_a_wav_to_resample_is_decoded_in_a_worker_thread():
    assert anyio.run(_decoded_while_threads_are_held, _wav(44100, 1.0)) is None
    pcm, duration = anyio.run(decoded, _wav(44100, 1.0))   # with the threads free it is decoded there
    assert pcm.size == MODEL_RATE and duration == 1.0


@pytest.mark.parametrize(("rate", "channels", "subtype", "by_wave"), [
    (16000, 1, "PCM_16", True), (44100, 2, "PCM_16", True), (16000, 1, "PCM_24", False), (22050, 1, "FLOAT", False)])
def test_a_16_bit_wav_is_read_by_the_standard_library_as_libsndfile_reads_it(rate, channels, subtype, by_wave):
    """16-bit PCM WAV (the usual upload) is read by `wave` in one piece, sample for sample what libsndfile gives;
    any other file is left, rewound, to libsndfile; decode's result is the same either way."""
    samples = np.random.default_rng(0).uniform(-1, 1, (rate // 2, channels)).astype(np.float32)
    data = io.BytesIO()
    soundfile.write(data, samples, rate, format="WAV", subtype=subtype)
    reference, reference_rate = soundfile.read(io.BytesIO(data.getvalue()), dtype="float32", always_2d=True)
    data.seek(0)
    read = _pcm16_wav(data)
    assert (read is not None) == by_wave
    if read is None:
        assert data.tell() == 0
    else:
        np.testing.assert_array_equal(read[0], reference)
        assert read[1] == reference_rate
    data.seek(0)
    pcm, duration = decode(data, MODEL_RATE)
    expected = reference.mean(axis=1) if channels > 1 else reference[:, 0]
    if reference_rate == MODEL_RATE:
        np.testing.assert_allclose(pcm, expected, atol=1e-6)
    assert duration == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize("content", [b"not audio at all" * 10, b"RIFF\x00\x00\x00\x00WAVEfmt " + b"\x00" * 40])
def test_an_undecodable_upload_is_a_400_saying_what_the_file_is_not(content):
    """The 400 says the file is not audio libsndfile reads, and why, without a Python object's repr."""
    with pytest.raises(ApiError) as caught:
        decode(io.BytesIO(content), MODEL_RATE)
    error = caught.value
    assert (error.status, error.param) == (400, "file")
    assert error.message.startswith("'file' is not an audio file libsndfile can read (")
    assert " object at 0x" not in error.message and "<" not in error.message, error.message
