"""fbank features: chunked audio gives exactly the whole utterance's frames; other rates are resampled faithfully."""
from __future__ import annotations

import kaldi_native_fbank as knf
import numpy as np
import pytest

from tritonkit.pipelines.asr.runtime.features import (
    NUM_MEL_BINS,
    SAMPLE_RATE,
    StreamingFbank,
    StreamingResampler,
    compute_fbank,
    fbank_options,
    resample,
)


def _audio(seconds: float = 1.3, rate: int = SAMPLE_RATE, noise: float = 0.01) -> np.ndarray:
    """A chirp with noise: energy that moves across the mel bands, so frames differ from each other."""
    t = np.arange(int(seconds * rate)) / rate
    chirp = 0.4 * np.sin(2 * np.pi * (200 + 1500 * t) * t)
    return (chirp + noise * np.random.default_rng(0).standard_normal(t.size)).astype(np.float32)


@pytest.mark.parametrize("chunk", [2560, 1000, 161, 7])  # 160 ms chunks, and sizes that split frames anywhere
def test_chunked_stream_equals_whole_utterance(chunk):
    audio = _audio()
    whole = compute_fbank(audio, SAMPLE_RATE)
    stream = StreamingFbank()
    parts = [stream.accept(audio[i:i + chunk]) for i in range(0, audio.size, chunk)] + [stream.finish()]
    assert np.array_equal(np.concatenate(parts), whole)
    assert all(p.shape[1] == NUM_MEL_BINS for p in parts)


def test_whole_utterance_equals_kaldi_native_fbank_fed_at_once():
    """compute_fbank feeds kaldi_native_fbank in pieces (to spare memory); the frames must be those of one call."""
    audio = _audio(seconds=3.0)
    fbank = knf.OnlineFbank(fbank_options())
    fbank.accept_waveform(SAMPLE_RATE, audio.tolist())
    fbank.input_finished()
    at_once = np.array([fbank.get_frame(i) for i in range(fbank.num_frames_ready)], np.float32)
    assert np.array_equal(compute_fbank(audio, SAMPLE_RATE), at_once)


def test_frames_are_80_dim_every_10_ms_and_deterministic():
    audio = _audio(seconds=2.0)
    feats = compute_fbank(audio, SAMPLE_RATE)
    assert feats.dtype == np.float32 and feats.shape == (200, NUM_MEL_BINS)  # snip_edges off: one frame per 10 ms
    assert np.array_equal(feats, compute_fbank(audio, SAMPLE_RATE))  # dither off
    assert np.all(np.isfinite(feats)) and feats.std(axis=0).min() > 0.1


@pytest.mark.parametrize("rate", [8000, 22050, 44100, 48000])
def test_resampled_sine_matches_the_sine_at_16k(rate):
    t = np.arange(rate) / rate
    out = resample(np.sin(2 * np.pi * 1000 * t), rate)
    want = np.sin(2 * np.pi * 1000 * np.arange(SAMPLE_RATE) / SAMPLE_RATE)
    assert out.shape == (SAMPLE_RATE,)
    assert np.abs(out - want)[100:-100].max() < 1e-3


def test_other_rates_give_the_features_of_the_same_audio_at_16k():
    at_16k = compute_fbank(_audio(rate=SAMPLE_RATE, noise=0.0), SAMPLE_RATE)
    at_48k = compute_fbank(_audio(rate=48000, noise=0.0), 48000)
    assert at_48k.shape == at_16k.shape
    loud = at_16k > at_16k.max() - 6  # where the chirp is; log energies of near-silence differ by design
    assert loud.sum() > 300
    assert np.abs(at_48k - at_16k)[loud].mean() < 0.05


@pytest.mark.parametrize("rate", [22050, 44100, 8000])
@pytest.mark.parametrize("chunk", [3528, 1000, 7])
def test_a_stream_at_another_rate_is_resampled_to_exactly_the_whole_signals_samples_and_frames(rate, chunk):
    audio = _audio(rate=rate)
    resampler = StreamingResampler(rate)
    pieces = [resampler.accept(audio[i:i + chunk]) for i in range(0, audio.size, chunk)] + [resampler.finish()]
    assert np.array_equal(np.concatenate(pieces), resample(audio, rate))
    stream = StreamingFbank(rate)
    frames = [stream.accept(audio[i:i + chunk]) for i in range(0, audio.size, chunk)] + [stream.finish()]
    assert np.array_equal(np.concatenate(frames), compute_fbank(audio, rate))


def test_bad_audio_and_rates_are_clear_errors():
    with pytest.raises(ValueError, match="positive"):
        StreamingFbank(0)
    for bad in ([0.0, np.nan], [np.inf, 0.0], [0.0, -np.inf], [np.inf, -np.inf]):
        with pytest.raises(ValueError, match="NaN or infinite"):
            compute_fbank(np.array(bad, np.float32), SAMPLE_RATE)
    with pytest.raises(ValueError, match="positive"):
        compute_fbank(np.zeros(10, np.float32), 0)


def test_audio_longer_than_max_seconds_is_refused_with_the_limit_named():
    two_s_at_8k = np.zeros(16000, np.float32)
    assert compute_fbank(two_s_at_8k, 8000, max_seconds=2.0).shape[0] > 0   # at the limit: served
    with pytest.raises(ValueError) as refused:
        compute_fbank(two_s_at_8k, 8000, max_seconds=1.5)
    assert str(refused.value) == ("audio of 2.00 s is longer than the limit (max_audio_seconds) of 1.5 s; split it "
                                  "into shorter requests, or raise the model's max_audio_seconds parameter")
    with pytest.raises(ValueError, match="positive"):
        compute_fbank(two_s_at_8k, 0, max_seconds=1.5)
