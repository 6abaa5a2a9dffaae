"""Streaming recognition of many streams at once: one execute's chunks -> one batched acoustic call -> partials.

Each stream (keyed by correlation id in a StreamTable) holds its fbank extractor (at the rate its first chunk gives,
resampled to 16 kHz as the offline path does), the feature frames still needed
as context (FrameBuffer) and its decoder search. `step` takes the chunks of one execute (at most one per stream),
sends every stream's window of newly final outputs to the acoustic model in as few padded batches as the windows
allow (one, unless streams end in the same step), feeds each stream's rows to its decoder and returns a partial
transcript per chunk, the final one on END. The acoustic model is a callable, so this runs outside Triton too.
"""
import functools
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from .decoder import DecoderStream, Transcript, WfstDecoder
from .features import SAMPLE_RATE, StreamingFbank, check_duration
from .stream_windows import FrameBuffer, Receptive, batch_calls, window_outputs
from .streams import StreamTable

#: features [B, L, 80] -> log-probs [B, L', V]
Acoustic = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Chunk:
    """One request: a stream's PCM chunk (float32) and its sequence flags; `rate` is the stream's sample rate,
    given on START (16 kHz when left out) and, when given again, the same on every later chunk."""

    key: Hashable
    pcm: np.ndarray
    start: bool
    end: bool
    rate: int | None = None


@dataclass
class _Stream:
    frames: FrameBuffer
    search: DecoderStream
    fbank: StreamingFbank | None = None   # made by the first chunk, at its rate


class StreamingRecognizer:
    """Live streams' states and the step that advances many of them with one acoustic call."""

    def __init__(self, decoder: WfstDecoder, receptive: Receptive, max_streams: int, idle_timeout_s: float,
                 max_chunk_seconds: float | None = None) -> None:
        self.decoder = decoder
        self.receptive = receptive
        self.max_chunk_seconds = max_chunk_seconds
        self.table: StreamTable[_Stream] = StreamTable(self._new, max_streams, idle_timeout_s)

    def _new(self) -> _Stream:
        return _Stream(FrameBuffer(self.receptive), self.decoder.stream())

    def step(self, chunks: list[Chunk], acoustic: Acoustic) -> list[Transcript | Exception]:
        """A transcript per chunk (partial, or final for an END chunk), or the exception that refused it.

        Chunks of one stream in the same list are taken in order, one round per repeat.
        """
        results: list[Transcript | Exception] = [Exception("not answered")] * len(chunks)
        pending = list(range(len(chunks)))
        while pending:
            firsts: dict[Hashable, int] = {}
            for i in pending:
                firsts.setdefault(chunks[i].key, i)
            pending = [i for i in pending if i not in firsts.values()]
            self._round([(i, chunks[i]) for i in firsts.values()], acoustic, results)
        return results

    def _feed(self, stream: _Stream, chunk: Chunk) -> None:
        """The chunk's samples into the stream's frames; a too long chunk, bad samples or a rate that is not the
        stream's raise before any change."""
        fbank = stream.fbank or StreamingFbank(SAMPLE_RATE if chunk.rate is None else chunk.rate)
        if chunk.rate is not None and chunk.rate != fbank.sample_rate:
            raise ValueError(f"a chunk at {chunk.rate} Hz in a stream that started at {fbank.sample_rate} Hz; "
                             "send every chunk of a stream at its first chunk's SAMPLE_RATE")
        if self.max_chunk_seconds is not None:
            check_duration(chunk.pcm.size, fbank.sample_rate, self.max_chunk_seconds, "max_chunk_seconds", "a chunk")
        stream.frames.add(fbank.accept(chunk.pcm))
        stream.fbank = fbank
        if chunk.end:
            stream.frames.add(fbank.finish())

    def _round(self, chunks: list[tuple[int, Chunk]], acoustic: Acoustic,
               results: list[Transcript | Exception]) -> None:
        live = []
        for i, chunk in chunks:
            try:
                stream = self.table.chunk(chunk.key, chunk.start, chunk.end, functools.partial(self._feed, chunk=chunk))
            except Exception as exc:  # noqa: BLE001 - unknown stream, limit, bad/too long samples: the chunk's answer
                results[i] = exc
                continue
            live.append((i, chunk, stream))
        windows, owners = [], []
        for _i, chunk, stream in live:
            window = stream.frames.window(chunk.end)
            if window is not None:
                windows.append(window)
                owners.append(stream)
        s = self.receptive.subsampling
        for call in batch_calls(windows, s):
            for w, rows in window_outputs(call, acoustic(call.batch), windows, s).items():
                owners[w].search.accept(rows)
                owners[w].frames.advance(windows[w])
        for i, chunk, stream in live:
            results[i] = stream.search.finalize() if chunk.end else stream.search.latest
