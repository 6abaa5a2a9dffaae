"""Sentence splitting of normalized text: the unit that streaming synthesizes and sends back one at a time."""
import re

# after . ! ? or … (optionally closed by a quote or bracket) and whitespace; blank lines and line breaks too
_BOUNDARY = re.compile(r"(?<=[.!?…])\s+|(?<=[.!?…][\"”’)\]])\s+|\s*\n\s*")


def split_sentences(text: str) -> list[str]:
    """Sentences in order; pieces without a letter or digit (a lone "...") join the sentence before them."""
    sentences: list[str] = []
    for piece in _BOUNDARY.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if re.search(r"[^\W_]", piece) or not sentences:  # \w less the underscore: a letter or digit
            sentences.append(piece)
        else:
            sentences[-1] += piece
    return sentences
