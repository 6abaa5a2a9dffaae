"""The frontend as one call: text -> normalized sentences -> Kokoro phonemes -> token-id segments that fit the model."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .chunks import chunk_phonemes
from .errors import FrontendError
from .espeak import Espeak
from .normalize import normalize
from .sentences import split_sentences
from .symbols import SymbolTable

MAX_TOKENS = 510  # Kokoro's context is 512 positions, two of them the pad ids around every sequence
# clause punctuation: espeak-ng drops it, Kokoro's table has it and uses it for pauses and intonation
_CLAUSE = re.compile(r"\s*([,;:.!?…—]+)\s*")


@dataclass(frozen=True)
class Segment:
    """One model call's worth of a sentence: at most `MAX_TOKENS` ids (most sentences are one segment)."""

    sentence: int
    text: str
    phonemes: str
    ids: list[int]


@dataclass
class FrontendResult:
    """Segments in speaking order, the normalized sentences, and every symbol the model's table lacks."""

    sentences: list[str]
    segments: list[Segment]
    unknown: Counter[str] = field(default_factory=Counter)


def sentences_of(text: str) -> list[str]:
    """Normalized sentences (no espeak-ng needed: what the streaming model splits on); empty input is an error."""
    if not text or not text.strip():
        raise FrontendError("text is empty; send at least one word")
    sentences = split_sentences(normalize(text))
    if not sentences:
        raise FrontendError(f"text {text[:40]!r} has nothing to speak; send words or numbers")
    return sentences


class Frontend:
    """Normalizes, splits, phonemizes (espeak-ng) and encodes English text for Kokoro."""

    def __init__(self, symbols: SymbolTable, espeak: Espeak | None = None, max_tokens: int = MAX_TOKENS) -> None:
        self.symbols = symbols
        self.espeak = espeak or Espeak("en-us")
        self.max_tokens = max_tokens

    @classmethod
    def from_vocab(cls, vocab_json: str | Path, voice: str = "en-us", max_tokens: int = MAX_TOKENS) -> Frontend:
        return cls(SymbolTable.load(vocab_json), Espeak(voice), max_tokens)

    def sentences(self, text: str) -> list[str]:
        """Normalized sentences; empty input is an error rather than silence."""
        return sentences_of(text)

    def phonemes(self, sentence: str) -> str:
        """Kokoro phonemes of one sentence, its clause punctuation kept."""
        parts: list[str] = []
        for i, piece in enumerate(_CLAUSE.split(sentence)):
            if not piece:
                continue
            if i % 2:  # the split's odd items are the captured punctuation: attach it to the clause before
                parts[-1:] = [(parts[-1] if parts else "") + piece]
            else:
                parts.append(self.symbols.kokoro_phonemes(self.espeak.ipa(piece)))
        return " ".join(p for p in parts if p)

    def segments(self, sentence: str, index: int = 0) -> tuple[list[Segment], Counter[str]]:
        """One sentence's segments and unknown symbols; long sentences are cut at clause, else word, boundaries."""
        unknown: Counter[str] = Counter()
        segments = []
        for piece in chunk_phonemes(self.phonemes(sentence), self.max_tokens):
            encoded = self.symbols.encode(piece)
            unknown.update(encoded.unknown)
            if encoded.ids and any(symbol.isalpha() for symbol in piece):  # punctuation alone says nothing
                segments.append(Segment(index, sentence, piece, encoded.ids))
        return segments, unknown

    def __call__(self, text: str) -> FrontendResult:
        result = FrontendResult(self.sentences(text), [])
        for i, sentence in enumerate(result.sentences):
            segments, unknown = self.segments(sentence, i)
            result.segments.extend(segments)
            result.unknown.update(unknown)
        if not result.segments:
            raise FrontendError(f"text {text[:40]!r} has nothing to speak; send words or numbers")
        return result
