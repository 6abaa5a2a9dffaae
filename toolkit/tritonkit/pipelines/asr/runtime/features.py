"""80-dim log-mel fbank features from float32 PCM, whole utterances and per-stream chunks alike.

Runs inside Triton Python model folders, so it imports only numpy and `kaldi_native_fbank`. Both the offline
and the streaming path go through `kaldi_native_fbank.OnlineFbank`, so audio fed in chunks gives exactly the
frames of the whole utterance. Dither is off: the same audio always gives the same features. Audio at another
rate is resampled to 16 kHz by one filter, whole (`resample`) or chunk by chunk (`StreamingResampler`, the same
samples), so a stream at any rate gives the frames of the same utterance sent whole.
"""
import math

import kaldi_native_fbank as knf
import numpy as np

SAMPLE_RATE = 16000
NUM_MEL_BINS = 80
#: Served bounds on one request's audio (model parameters max_audio_seconds, max_chunk_seconds): PCM is `dims: [-1]`
#: and Triton 2.51 has no request-size flag, so without them one request could hold the model for minutes.
MAX_AUDIO_SECONDS = 60.0
MAX_CHUNK_SECONDS = 5.0
_SINC_HALF_WIDTH = 16  # taps each side of the resampling filter; enough for speech at 16 kHz
#: Samples handed to kaldi_native_fbank per call. It takes a Python list; converting a whole 10 s recording at once
#: makes 160,000 float objects whose ~4 MB of allocator arenas are mapped and returned to the system on every call
#: (~900 page faults, ~20% of the fbank time); pieces this size reuse the same memory. Frames are identical.
_FEED_SAMPLES = 4000


def fbank_options() -> knf.FbankOptions:
    """Kaldi fbank settings shared by training, offline and streaming extraction."""
    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = SAMPLE_RATE
    opts.frame_opts.dither = 0.0
    opts.frame_opts.snip_edges = False
    opts.mel_opts.num_bins = NUM_MEL_BINS
    return opts


def _check_rate(rate: int) -> None:
    if rate <= 0:
        raise ValueError(f"sample rate must be positive, got {rate}")


def check_duration(samples: int, rate: int, max_seconds: float, parameter: str, what: str = "audio") -> None:
    """Refuses `samples` at `rate` Hz lasting more than `max_seconds` (ValueError: the request's error), before any
    work is done on them; the message names the limit and the model parameter that sets it."""
    _check_rate(rate)
    seconds = samples / rate
    if seconds > max_seconds:
        raise ValueError(f"{what} of {seconds:.2f} s is longer than the limit ({parameter}) of {max_seconds:g} s; "
                         f"split it into shorter requests, or raise the model's {parameter} parameter")


class _Sinc:
    """Band-limited (Hann-windowed sinc) polyphase filter from `rate` to `target` Hz: output n sits at input
    n * down / up and weighs the inputs from `width` - 1 before it to `width` after it (zeros beyond the signal)."""

    def __init__(self, rate: int, target: int) -> None:
        _check_rate(rate)
        step = math.gcd(rate, target)
        self.up, self.down = target // step, rate // step
        cutoff = min(1.0, target / rate)  # low-pass at the lower Nyquist frequency, in units of the input rate
        self.width = int(np.ceil(_SINC_HALF_WIDTH / cutoff))
        self.offsets = np.arange(-self.width + 1, self.width + 1)
        dist = np.arange(self.up)[:, None] / self.up - self.offsets[None, :]  # [phase, tap]: output to input instant
        window = 0.5 + 0.5 * np.cos(np.pi * np.clip(dist / self.width, -1.0, 1.0))
        self.taps = cutoff * np.sinc(cutoff * dist) * window

    def outputs(self, inputs: np.ndarray, first: int, start: int, stop: int) -> np.ndarray:
        """Output samples start..stop-1 from `inputs` (float64), the signal's samples from index `first` on (zeros
        before 0 and after the end included, as far as these outputs reach)."""
        n = np.arange(start, stop, dtype=np.int64) * self.down
        idx = (n // self.up)[:, None] + self.offsets[None, :] - first
        return np.einsum("nk,nk->n", inputs[idx], self.taps[n % self.up]).astype(np.float32)


def resample(pcm: np.ndarray, rate: int, target: int = SAMPLE_RATE) -> np.ndarray:
    """Band-limited (Hann-windowed sinc) polyphase resampling of a whole signal from `rate` to `target` Hz."""
    _check_rate(rate)
    if rate == target or np.size(pcm) == 0:
        return np.asarray(pcm, dtype=np.float32)  # no copy for float32 audio already at the rate
    x = np.asarray(pcm, dtype=np.float64).reshape(-1)
    sinc = _Sinc(rate, target)
    padded = np.concatenate([np.zeros(sinc.width), x, np.zeros(sinc.width + 1)])
    return sinc.outputs(padded, -sinc.width, 0, x.size * sinc.up // sinc.down)


class StreamingResampler:
    """One stream's resampling to `target` Hz, chunk by chunk: together its outputs are exactly `resample`'s of the
    whole stream. An output is made once every input it weighs has arrived; `finish` makes the rest."""

    def __init__(self, rate: int, target: int = SAMPLE_RATE) -> None:
        self._sinc = _Sinc(rate, target)
        self._inputs = np.zeros(self._sinc.width)  # the signal from index self._first on: zeros before it starts
        self._first = -self._sinc.width
        self._received = 0
        self._made = 0

    def accept(self, pcm: np.ndarray) -> np.ndarray:
        """Add a chunk at the stream's rate; returns the output samples it completed."""
        x = np.asarray(pcm, dtype=np.float64).reshape(-1)
        self._inputs = np.concatenate([self._inputs, x])
        self._received += x.size
        up, down, width = self._sinc.up, self._sinc.down, self._sinc.width
        return self._make(-(-(self._received - width) * up // down))  # outputs whose last input (n*down//up+width) came

    def finish(self) -> np.ndarray:
        """End of stream: the remaining outputs, with zeros after the last sample."""
        self._inputs = np.concatenate([self._inputs, np.zeros(self._sinc.width + 1)])
        return self._make(self._received * self._sinc.up // self._sinc.down)

    def _make(self, stop: int) -> np.ndarray:
        start, self._made = self._made, max(self._made, stop)
        out = self._sinc.outputs(self._inputs, self._first, start, self._made)
        needed = self._made * self._sinc.down // self._sinc.up - self._sinc.width + 1  # the next output's first input
        drop = max(0, needed - self._first)
        self._inputs, self._first = self._inputs[drop:], self._first + drop
        return out


def _as_pcm(pcm: np.ndarray) -> np.ndarray:
    x = np.asarray(pcm, dtype=np.float32).reshape(-1)
    # a float64 sum is NaN or infinite exactly when a sample is (it cannot overflow), and needs no temporary array
    with np.errstate(invalid="ignore"):   # inf + -inf is NaN: the answer, not a problem
        total = float(np.sum(x, dtype=np.float64))
    if not math.isfinite(total):
        raise ValueError("audio has NaN or infinite samples; send float32 PCM in [-1, 1]")
    return x


class StreamingFbank:
    """One stream's feature extractor: feed chunks with `accept`, collect the frames they complete. Audio at
    another `sample_rate` is resampled to 16 kHz as it arrives, to exactly the samples `resample` makes of it whole."""

    def __init__(self, sample_rate: int = SAMPLE_RATE) -> None:
        _check_rate(sample_rate)
        self.sample_rate = sample_rate
        self._resampler = StreamingResampler(sample_rate) if sample_rate != SAMPLE_RATE else None
        self._fbank = knf.OnlineFbank(fbank_options())
        self._taken = 0

    def accept(self, pcm: np.ndarray) -> np.ndarray:
        """Add a chunk of float32 PCM at the stream's rate; returns the new frames it completed, [n, 80] float32."""
        self.feed(pcm)
        return self._take()

    def feed(self, pcm: np.ndarray) -> None:
        """Add a chunk of float32 PCM at the stream's rate; its frames come with the next `accept` or `finish`."""
        samples = _as_pcm(pcm)
        self._feed_16k(self._resampler.accept(samples) if self._resampler else samples)

    def finish(self) -> np.ndarray:
        """End of stream: returns the frames held back for the last window (with snip_edges off)."""
        if self._resampler:
            self._feed_16k(self._resampler.finish())
        self._fbank.input_finished()
        return self._take()

    def _feed_16k(self, samples: np.ndarray) -> None:
        for start in range(0, samples.size, _FEED_SAMPLES):
            self._fbank.accept_waveform(SAMPLE_RATE, samples[start:start + _FEED_SAMPLES].tolist())

    def _take(self) -> np.ndarray:
        ready = self._fbank.num_frames_ready
        frames = [self._fbank.get_frame(i) for i in range(self._taken, ready)]
        self._taken = ready
        return np.asarray(frames, dtype=np.float32).reshape(len(frames), NUM_MEL_BINS)


def compute_fbank(pcm: np.ndarray, sample_rate: int, max_seconds: float | None = None) -> np.ndarray:
    """Features of a whole utterance, [frames, 80] float32; audio at other rates is resampled to 16 kHz.

    `max_seconds` (the served model's max_audio_seconds) refuses longer audio before resampling it."""
    if max_seconds is not None:
        check_duration(np.size(pcm), sample_rate, max_seconds, "max_audio_seconds")
    audio = resample(_as_pcm(pcm), sample_rate)
    stream = StreamingFbank()
    stream.feed(audio)
    return stream.finish()
