"""Kokoro-82M in process: real speech for English text (length near espeak-ng's, far above the noise floor)."""
from __future__ import annotations

import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from tritonkit.pipelines.tts.frontend import Frontend
from tritonkit.pipelines.tts.kokoro.assets import KokoroAssets
from tritonkit.pipelines.tts.runtime import SAMPLE_RATE, KokoroModel, Synthesizer

pytestmark = pytest.mark.slow
TEXT = "Triton serves speech at 24 kilohertz."


@pytest.fixture(scope="module")
def synthesizer(kokoro: KokoroAssets, frontend: Frontend) -> Synthesizer:
    return Synthesizer(frontend, KokoroModel(kokoro.model, kokoro.voices, intra_op_threads=2))


def espeak_seconds(text: str, tmp_path: Path) -> float:
    """Length of espeak-ng's own rendering of `text` (its CLI, as a listener would hear it)."""
    out = tmp_path / "espeak.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(out), text], check=True, timeout=60)
    with wave.open(str(out)) as w:
        return w.getnframes() / w.getframerate()


def rms(audio: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(audio, dtype=np.float64))))


def test_kokoro_speaks_english_text(synthesizer: Synthesizer, tmp_path: Path) -> None:
    speech = synthesizer.synthesize(TEXT)
    assert speech.sample_rate == SAMPLE_RATE == 24000 and speech.audio.dtype == np.float32
    ratio = speech.seconds / espeak_seconds(TEXT, tmp_path)
    assert 0.5 <= ratio <= 2.0, f"Kokoro {speech.seconds:.2f} s vs espeak-ng: ratio {ratio:.2f}"
    frames = speech.audio[: len(speech.audio) // 480 * 480].reshape(-1, 480)   # 20 ms frames
    floor = np.percentile(np.sqrt(np.mean(frames.astype(np.float64) ** 2, axis=1)), 5)
    assert rms(speech.audio) > 0.02 and rms(speech.audio) > 10 * floor, (rms(speech.audio), floor)
    assert np.abs(speech.audio).max() <= 1.5 and not speech.unknown
    assert speech.sentences == ["Triton serves speech at twenty-four kilohertz."]


def test_streamed_sentences_concatenate_to_the_whole_utterance(synthesizer: Synthesizer) -> None:
    text = "Hello there. Streaming starts early!"
    chunks = list(synthesizer.stream(text))
    assert [c.sentence for c in chunks] == [0, 1] and [c.text for c in chunks] == [
        "Hello there.",
        "Streaming starts early!",
    ]
    assert all(rms(c.audio) > 0.02 for c in chunks)
    whole = synthesizer.synthesize(text).audio
    np.testing.assert_allclose(np.concatenate([c.audio for c in chunks]), whole, atol=1e-4)


def test_voice_and_speed_are_parameters(synthesizer: Synthesizer) -> None:
    normal = synthesizer.synthesize("Speed and voice are request parameters.")
    fast = synthesizer.synthesize("Speed and voice are request parameters.", speed=1.6)
    other = synthesizer.synthesize("Speed and voice are request parameters.", voice="jm_kumo")
    assert fast.seconds < 0.85 * normal.seconds
    assert len(other.audio) != len(normal.audio) or not np.allclose(other.audio, normal.audio)
    with pytest.raises(ValueError, match="unknown voice 'af_heart'; choose one of jf_alpha"):
        synthesizer.synthesize("Hello.", voice="af_heart")
    with pytest.raises(ValueError, match="speed 9.0 is out of range"):
        synthesizer.synthesize("Hello.", speed=9.0)


def test_a_token_id_beyond_the_models_table_is_a_value_error(synthesizer: Synthesizer) -> None:
    """onnxruntime's own INVALID_ARGUMENT (an id past the embedding) is the request's error, not a crash of the
    batch."""
    with pytest.raises(ValueError, match="token ids .* are not all in the model's table"):
        synthesizer.model.synthesize([50, 99999], "jf_alpha")
