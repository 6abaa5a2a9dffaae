"""Text to speech in process: the frontend's segments through Kokoro, whole or one sentence at a time.

`stream` yields each sentence's audio as soon as it is synthesized (what the streaming model sends back);
`synthesize` is the same chunks concatenated, so streamed and whole audio agree sample for sample.
"""
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..frontend import Frontend
from .kokoro import SAMPLE_RATE, KokoroModel


@dataclass
class SpeechChunk:
    """One sentence's audio (its segments joined) and the symbols its phonemes had that the model lacks."""

    sentence: int
    text: str
    audio: np.ndarray
    unknown: Counter[str] = field(default_factory=Counter)
    sample_rate: int = SAMPLE_RATE


@dataclass
class Speech:
    """A whole utterance: PCM, its rate, the normalized sentences and all unknown symbols."""

    audio: np.ndarray
    sentences: list[str]
    unknown: Counter[str]
    sample_rate: int = SAMPLE_RATE

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.sample_rate


class Synthesizer:
    """Frontend + Kokoro; voice and speed are per call."""

    def __init__(self, frontend: Frontend, model: KokoroModel, voice: str = "jf_alpha") -> None:
        self.frontend = frontend
        self.model = model
        self.voice = voice
        model.style(voice, 1)  # an unknown default voice fails here, not on the first request

    def stream(self, text: str, voice: str | None = None, speed: float = 1.0) -> Iterator[SpeechChunk]:
        """Sentence by sentence; sentences with nothing to say (no known symbol) are skipped but still report."""
        voice = voice or self.voice
        self.model.style(voice, 1)
        for index, sentence in enumerate(self.frontend.sentences(text)):
            segments, unknown = self.frontend.segments(sentence, index)
            audio = [self.model.synthesize(s.ids, voice, speed) for s in segments]
            yield SpeechChunk(index, sentence, np.concatenate(audio) if audio else np.zeros(0, np.float32), unknown)

    def synthesize(self, text: str, voice: str | None = None, speed: float = 1.0) -> Speech:
        """The whole text as one PCM array (the streamed chunks, concatenated)."""
        chunks = list(self.stream(text, voice, speed))
        unknown: Counter[str] = Counter()
        for chunk in chunks:
            unknown.update(chunk.unknown)
        return Speech(np.concatenate([c.audio for c in chunks]), [c.text for c in chunks], unknown)
