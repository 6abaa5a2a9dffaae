"""Sentence streaming as the served pipeline does it: split the text, synthesize one sentence at a time, stop
as soon as the client cancels. Inside Triton `synthesize` makes the BLS calls to `frontend` and `speech`; in
tests it is anything with the same signature, so the loop is tested outside Triton.
"""
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from ..frontend import sentences_of


@dataclass(frozen=True)
class SentenceAudio:
    """One streamed response: a sentence's audio, its rate and the symbols the model lacked (JSON object)."""

    index: int
    text: str
    audio: np.ndarray
    sample_rate: int
    unknown_symbols: str


Synthesize = Callable[[str], tuple[np.ndarray, int, str]]   # normalized sentence -> (audio, sample rate, unknown JSON)


def stream_sentences(text: str, synthesize: Synthesize, cancelled: Callable[[], bool]) -> Iterator[SentenceAudio]:
    """Each sentence's audio as soon as it is ready; nothing more once `cancelled()` says so.

    Empty text raises FrontendError before anything is synthesized. Cancellation is checked before each
    sentence, so a cancelled stream costs at most the sentence already being synthesized.
    """
    for index, sentence in enumerate(sentences_of(text)):
        if cancelled():
            return
        audio, rate, unknown = synthesize(sentence)
        yield SentenceAudio(index, sentence, audio, rate, unknown)
