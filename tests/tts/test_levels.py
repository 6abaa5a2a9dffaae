"""Output level: synthesized audio never exceeds full scale, so a 16-bit writer never clips it, whole or streamed.

Kokoro-82M in process on the tts starter's smoke texts (read from the starter's spec) in its default voice and in
jm_kumo at the speeds smoke uses, plus the served tests' sentence: several peak above 1.0 without the bound.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from tritonkit.pipelines.tts.frontend import Frontend
from tritonkit.pipelines.tts.kokoro.assets import KokoroAssets
from tritonkit.pipelines.tts.runtime import KokoroModel, Synthesizer
from tritonkit.pipelines.tts.runtime.levels import FULL_SCALE, within_full_scale
from tritonkit.pipelines.tts.runtime.three_stage import ThreeStage

STARTER = (
    Path(__file__).resolve().parents[2] / "toolkit" / "tritonkit" / "pipelines" / "tts" / "starter" / "tritonkit.yaml"
)
SERVED_TEXT = "Triton serves speech at 24 kilohertz."   # tests/tts/test_served.py's; jm_kumo peaks at ~1.13 on it


def smoke_texts() -> list[str]:
    """Every `text` input of the starter's smoke cases, in order, once each."""
    cases = [case for model in yaml.safe_load(STARTER.read_text())["smoke"].values() for case in model]
    return list(dict.fromkeys(str(case["inputs"]["text"][0][0]) for case in cases if "text" in case["inputs"]))


def test_a_segment_above_full_scale_is_scaled_to_it_and_one_within_is_left_as_it_is() -> None:
    loud = np.array([0.2, -1.4, 0.7], dtype=np.float32)
    bounded = within_full_scale(loud)
    assert float(np.abs(bounded).max()) == pytest.approx(FULL_SCALE) and FULL_SCALE * 32768 == 32767
    np.testing.assert_allclose(bounded / bounded[1], loud / loud[1], rtol=1e-6)   # a gain, not a clip
    quiet = np.array([0.5, -FULL_SCALE], dtype=np.float32)
    assert within_full_scale(quiet) is quiet and within_full_scale(np.zeros(0, np.float32)).size == 0


def test_three_stage_segments_are_bounded_too() -> None:
    stages = ThreeStage(acoustic=lambda feed: {"mel": np.zeros((2, 4), np.float32)},
                        vocoder=lambda feed: {"audio": np.array([0.5, -2.0, 1.5], np.float32),
                                              "sample_rate": np.array([16000])})
    audio, rate = stages.synthesize([[1, 2], [3]])
    assert rate == 16000 and float(np.abs(audio).max()) <= FULL_SCALE


@pytest.mark.slow
def test_kokoro_never_exceeds_full_scale_on_the_starters_smoke_texts(kokoro: KokoroAssets, frontend: Frontend) -> None:
    synthesizer = Synthesizer(frontend, KokoroModel(kokoro.model, kokoro.voices, intra_op_threads=2))
    texts = smoke_texts()
    assert texts == [
        "Hello. Goodbye.",
        "We drove to Llanelli.",
        "Hello.",
    ]  # the starter's, as this test was written for
    peaks = {}
    for text in [*texts, SERVED_TEXT]:
        for voice, speed in [("jf_alpha", 1.0), ("jm_kumo", 1.0), ("jm_kumo", 1.2)]:
            whole = synthesizer.synthesize(text, voice, speed).audio
            chunks = [c.audio for c in synthesizer.stream(text, voice, speed)]
            peaks[text, voice, speed] = float(np.abs(whole).max())
            assert max(float(np.abs(c).max()) for c in chunks) <= FULL_SCALE, (text, voice, speed)
            np.testing.assert_allclose(np.concatenate(chunks), whole, atol=1e-4)   # streamed sentences = the whole
    assert max(peaks.values()) <= FULL_SCALE, peaks
    assert any(peak == pytest.approx(FULL_SCALE) for peak in peaks.values()), f"no case reached full scale: {peaks}"
