"""The three-stage TTS template (tritonkit:ensembles/tts_three_stage.yaml) on the real embedded Triton.

examples/tts_tiny is built as a user would (its FastPitch-like acoustic model and HiFi-GAN-like vocoder exported
to ONNX and verified by tritonkit) and served once for the module. The served audio must be exactly what the
same ONNX files give in process (frontend -> acoustic -> vocoder per segment), as long as the predicted
durations say (sum(durations) * hop samples), over HTTP and gRPC; `tts_stream` must send each sentence's part
of the whole utterance.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from tests.conftest import REPO_ROOT, run_cli
from tests.tts.conftest import espeak_or_skip
from tritonkit.export.verify import session
from tritonkit.pipelines.tts.frontend import Frontend, SymbolTable
from tritonkit.pipelines.tts.runtime.three_stage import ThreeStage
from tritonkit.serve.server import EmbeddedServer

if str(REPO_ROOT) not in sys.path:  # `examples` is a package at the repository root
    sys.path.insert(0, str(REPO_ROOT))

from examples.tts.client import request_inputs, stream, stream_events, synthesize  # noqa: E402
from examples.tts_tiny.models import HOP, SAMPLE_RATE  # noqa: E402

pytestmark = pytest.mark.server

SHORT = "Hello there."
TWO = "Triton serves speech in three stages. The vocoder makes the samples!"
ATOL = 1e-5   # the same ONNX files in the same onnxruntime; only thread scheduling may differ


class InProcess:
    """The built ONNX files and vocab.json in onnxruntime here: the reference the served pipeline must match."""

    def __init__(self, repository: Path) -> None:
        self.frontend = Frontend(SymbolTable.load(repository / "acoustic" / "1" / "vocab.json"), espeak_or_skip())
        acoustic = session(repository / "acoustic" / "1" / "model.onnx")
        vocoder = session(repository / "vocoder" / "1" / "model.onnx")
        self.durations: list[np.ndarray] = []

        def run_acoustic(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            mel, durations = acoustic.run(["mel", "durations"], inputs)
            self.durations.append(durations)
            return {"mel": mel}

        self.stages = ThreeStage(run_acoustic,
                                 lambda inputs: dict(zip(["audio", "sample_rate"], vocoder.run(None, inputs))))

    def sentences(self, text: str) -> list[tuple[np.ndarray, int]]:
        """Per sentence: its audio and the sum of its tokens' predicted durations (frames)."""
        out = []
        for index, sentence in enumerate(self.frontend.sentences(text)):
            segments, _ = self.frontend.segments(sentence, index)
            self.durations.clear()
            audio, rate = self.stages.synthesize([s.ids for s in segments])
            assert rate == SAMPLE_RATE
            out.append((audio, int(sum(d.sum() for d in self.durations))))
        return out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/tts_tiny copied and built (exports verified), as `tritonkit build` in that folder does it."""
    espeak_or_skip()
    folder = tmp_path_factory.mktemp("tts_tiny")
    shutil.copytree(REPO_ROOT / "examples" / "tts_tiny", folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", ".tritonkit", "model_repository"))
    result = run_cli("build", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture(scope="module")
def served(project: Path):
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit", startup_timeout=120) as server:
        yield server


@pytest.fixture(scope="module")
def in_process(project: Path) -> InProcess:
    return InProcess(project / "model_repository")


def _grpc_whole(url: str, text: str, **options) -> tuple[np.ndarray, int]:
    result = grpcclient.InferenceServerClient(url).infer("tts", request_inputs(grpcclient, text, **options))
    return result.as_numpy("audio").reshape(-1), int(result.as_numpy("sample_rate").reshape(-1)[0])


def _close(a: np.ndarray, b: np.ndarray) -> None:
    assert a.size == b.size, f"{a.size} vs {b.size} samples"
    assert float(np.max(np.abs(a - b), initial=0.0)) <= ATOL


def test_whole_utterance_is_the_in_process_result_over_http_and_grpc(served, in_process: InProcess) -> None:
    lengths = set()
    for text in (SHORT, TWO):
        sentences = in_process.sentences(text)
        expected = np.concatenate([audio for audio, _ in sentences])
        assert expected.size == sum(frames for _, frames in sentences) * HOP   # as long as the durations say
        http = synthesize(served.http_url, text)
        assert http.sample_rate == SAMPLE_RATE and http.unknown_symbols == {}
        _close(http.audio, expected)
        audio, rate = _grpc_whole(served.grpc_url, text)
        assert rate == SAMPLE_RATE
        _close(audio, expected)
        assert float(np.sqrt(np.mean(audio ** 2))) > 1e-3   # the vocoder's output, not zeros
        lengths.add(audio.size)
    assert len(lengths) == 2


def test_lengths_follow_the_predicted_durations_not_the_token_count(served, in_process: InProcess) -> None:
    # same number of letters and spaces, different phonemes: different durations
    (a, frames_a), = in_process.sentences("Bob sat.")
    (b, frames_b), = in_process.sentences("Sue ran.")
    assert frames_a != frames_b
    assert synthesize(served.http_url, "Bob sat.").audio.size == frames_a * HOP
    assert synthesize(served.http_url, "Sue ran.").audio.size == frames_b * HOP
    faster = synthesize(served.http_url, TWO, speed=2.0).audio.size   # speed is the acoustic model's pace
    assert faster < synthesize(served.http_url, TWO).audio.size


def test_streamed_sentences_are_the_whole_utterance_per_sentence(served, in_process: InProcess) -> None:
    sentences = stream(served.grpc_url, TWO)
    assert [s.sentence for s in sentences] == ["Triton serves speech in three stages.",
                                               "The vocoder makes the samples!"]
    expected = in_process.sentences(TWO)
    whole = synthesize(served.http_url, TWO).audio
    start = 0
    for chunk, (audio, frames) in zip(sentences, expected):
        assert chunk.sample_rate == SAMPLE_RATE and chunk.audio.size == frames * HOP
        _close(chunk.audio, audio)
        _close(chunk.audio, whole[start:start + chunk.audio.size])
        start += chunk.audio.size
    assert start == whole.size


def test_a_voice_or_a_speed_out_of_range_is_refused_with_the_reason(served) -> None:
    with pytest.raises(InferenceServerException) as info:
        httpclient.InferenceServerClient(served.http_url).infer(
            "tts", request_inputs(httpclient, SHORT, voice="jf_alpha")
        )
    assert "has one voice; leave voice out" in info.value.message()
    with pytest.raises(InferenceServerException) as info:
        _grpc_whole(served.grpc_url, SHORT, speed=9.0)
    assert "speed 9.0 is out of range; use 0.25 .. 4.0" in info.value.message()


def test_text_beyond_the_shipped_max_chars_is_refused_whole_and_streamed(served) -> None:
    """tts.yaml's max_chars (5000) as shipped, on `frontend` (so the `tts` ensemble) and on `tts_stream`."""
    too_long = "Hello there. " * 385   # 5005 characters
    with pytest.raises(InferenceServerException) as whole:
        synthesize(served.http_url, too_long)
    assert whole.value.status() == "400"
    assert "text of 5005 characters is longer than the limit (max_chars) of 5000" in whole.value.message()
    with pytest.raises(InferenceServerException,
                       match=r"text of 5005 characters is longer than the limit \(max_chars\)"):
        stream(served.grpc_url, too_long)


def test_a_speed_out_of_range_is_refused_before_streaming_naming_speed_not_the_speech_model(served) -> None:
    """gRPC stream errors carry no status code here, so the message and the absence of audio are what is checked."""
    events = list(stream_events(served.grpc_url, TWO, speed=9.0))
    errors = [error for _, error in events if error is not None]
    assert len(errors) == 1
    message = errors[0].message()
    assert "speed 9.0 is out of range; use 0.25 .. 4.0" in message
    assert (
        "model 'speech'" not in message and "failed" not in message
    )  # was "model 'speech' called by 'tts_stream' failed: ..."
    assert not [result for result, error in events if error is None and result.get_response().outputs]
