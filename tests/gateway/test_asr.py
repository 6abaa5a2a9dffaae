"""/v1/audio/transcriptions with OpenAI's client against the asr starter on the embedded Triton: a held-out WAV and
the same clip as a 44.1 kHz stereo FLAC give the native pipeline's transcript (the `asr` ensemble sent the file's
own samples at the file's own rate); text, srt, vtt, verbose_json and stream=true carry the same words."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import openai
import pytest
import soundfile
import soxr
import tritonclient.grpc as grpcclient

from tests.conftest import REPO_ROOT
from tests.gateway.conftest import gateway, served, starter

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))

from examples.asr.heldout import read_heldout, read_wav  # noqa: E402

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    project = starter(tmp_path_factory.mktemp("gw-asr"), "asr")
    with served(project) as server, gateway(project, server) as base:
        yield server, openai.OpenAI(base_url=base, api_key="unused", max_retries=0)


def _native(server, pcm: np.ndarray, rate: int) -> str:
    """The pipeline's own transcript: the `asr` ensemble given the samples at their own rate."""
    client = grpcclient.InferenceServerClient(server.grpc_url)
    inputs = [grpcclient.InferInput("PCM", [1, pcm.size], "FP32"), grpcclient.InferInput("SAMPLE_RATE", [1, 1], "INT32")]
    inputs[0].set_data_from_numpy(pcm[None].astype(np.float32))
    inputs[1].set_data_from_numpy(np.array([[rate]], np.int32))
    return client.infer("asr", inputs).as_numpy("TRANSCRIPT")[0, 0].decode()


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, Path, np.ndarray, int]]:
    """(wav, 44.1 kHz stereo flac, flac samples, 44100) of two held-out clips."""
    folder = tmp_path_factory.mktemp("clips")
    made = []
    for utterance in read_heldout()[:2]:
        pcm, rate = read_wav(utterance.path)
        high = soxr.resample(pcm, rate, 44100).astype(np.float32)
        flac = folder / f"{utterance.path.stem}.flac"
        soundfile.write(flac, np.stack([high, high], axis=1), 44100, format="FLAC")
        made.append((utterance.path, flac, soundfile.read(flac, dtype="float32")[0].mean(axis=1), 44100))
    return made


def test_wav_and_44k_flac_equal_the_native_transcript(stack, clips):
    server, client = stack
    for wav, flac, high, rate in clips:
        native_wav = _native(server, *read_wav(wav))
        with wav.open("rb") as f:
            assert client.audio.transcriptions.create(model="asr", file=f).text == native_wav
        with flac.open("rb") as f:
            assert client.audio.transcriptions.create(model="asr", file=f).text == _native(server, high, rate) == native_wav
        assert native_wav


def test_formats_and_stream_carry_the_same_words(stack, clips):
    _, client = stack
    wav = clips[0][0]
    text = client.audio.transcriptions.create(model="asr", file=wav).text
    assert client.audio.transcriptions.create(model="asr", file=wav, response_format="text").strip() == text
    srt = client.audio.transcriptions.create(model="asr", file=wav, response_format="srt")
    assert srt.splitlines()[0] == "1" and " --> " in srt.splitlines()[1] and srt.splitlines()[2] == text
    vtt = client.audio.transcriptions.create(model="asr", file=wav, response_format="vtt")
    assert vtt.startswith("WEBVTT") and text in vtt
    verbose = client.audio.transcriptions.create(model="asr", file=wav, response_format="verbose_json",
                                                 timestamp_granularities=["word", "segment"])
    assert [w.word for w in verbose.words] == text.split() and verbose.segments[0].text == text
    assert verbose.duration == pytest.approx(read_wav(wav)[0].size / read_wav(wav)[1], abs=1e-3)
    events = list(client.audio.transcriptions.create(model="asr", file=wav, stream=True))
    assert "".join(e.delta for e in events if e.type == "transcript.text.delta") == text
    assert [e.text for e in events if e.type == "transcript.text.done"] == [text]


def test_bad_uploads_and_parameters_are_400s(stack, clips, tmp_path):
    _, client = stack
    junk = tmp_path / "junk.wav"
    junk.write_bytes(b"not audio at all" * 10)
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.transcriptions.create(model="asr", file=junk)
    assert caught.value.body["param"] == "file"
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.transcriptions.create(model="asr", file=clips[0][0], prompt="hint")
    assert caught.value.body["param"] == "prompt"
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.transcriptions.create(model="asr", file=clips[0][0], extra_body={"beam": 3})
    assert caught.value.body["param"] == "beam"
    with pytest.raises(openai.NotFoundError) as missing:
        client.audio.transcriptions.create(model="llm", file=clips[0][0])
    assert missing.value.body["code"] == "model_not_found" and "asr" in missing.value.body["message"]
