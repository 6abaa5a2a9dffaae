"""Splits a sentence's phonemes that exceed the model's context into pieces, at the gentlest boundary that fits."""
import re

# a clause end (punctuation then a space), else a word end; a piece is cut hard only if one word is too long
_BOUNDARIES = (re.compile(r"[,;:—…!?.] "), re.compile(r" "))


def chunk_phonemes(phonemes: str, max_symbols: int) -> list[str]:
    """Pieces of at most `max_symbols` characters, in order, whose concatenation is `phonemes` less the cut spaces."""
    if max_symbols < 1:
        raise ValueError(f"max_symbols must be at least 1, got {max_symbols}")
    pieces = []
    rest = phonemes.strip()
    while len(rest) > max_symbols:
        window = rest[:max_symbols + 1]  # a boundary's space may sit just past the limit
        cut = max_symbols
        for boundary in _BOUNDARIES:
            ends = [m.end() - 1 for m in boundary.finditer(window)]
            if ends and ends[-1] > 0:
                cut = ends[-1]
                break
        pieces.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        pieces.append(rest)
    return pieces
