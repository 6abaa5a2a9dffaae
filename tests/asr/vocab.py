"""A small closed vocabulary for graph and decoder tests: digits and commands spelled with letter tokens.

`posteriors` makes synthetic CTC log-probs that spell a word sequence: each token peaked for `hold` frames,
blanks before, between words and between repeated letters, so the expected words and frames are known.
"""
from __future__ import annotations

import string
from pathlib import Path

import numpy as np

TOKENS = ["<blk>", *string.ascii_lowercase, "'"]
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "call", "stop", "go", "up",
         "down", "don't"]
GRAMMAR = "# commands\ncall (zero|one|two|three|four|five|six|seven|eight|nine)+\nstop\ngo (up|down)\ndon't stop\n"
CORPUS = "call one two three\ncall nine nine\nstop\ngo up\ngo down\ncall zero four five six seven eight\ndon't stop\n"
LEAD, HOLD, GAP = 4, 3, 2


def write_inputs(folder: Path) -> dict[str, Path]:
    """tokens.txt, lexicon.txt, grammar.txt and corpus.txt of this vocabulary, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "tokens": ("tokens.txt", "".join(f"{t} {i}\n" for i, t in enumerate(TOKENS))),
        "lexicon": ("lexicon.txt", "".join(f"{w} {' '.join(w)}\n" for w in WORDS)),
        "grammar": ("grammar.txt", GRAMMAR),
        "corpus": ("corpus.txt", CORPUS),
    }
    for name, text in files.values():
        (folder / name).write_text(text)
    return {key: folder / name for key, (name, _) in files.items()}


def frame_tokens(words: list[str]) -> list[int]:
    """The per-frame token ids of the synthetic utterance."""
    frames = [0] * LEAD
    for word in words:
        previous = None
        for letter in word:
            if letter == previous:
                frames.append(0)
            frames += [TOKENS.index(letter)] * HOLD
            previous = letter
        frames += [0] * GAP
    return frames


def posteriors(words: list[str], peak: float = 0.9) -> np.ndarray:
    """log-probs [T, V]: `peak` on the frame's token, the rest spread over the others."""
    frames = frame_tokens(words)
    probs = np.full((len(frames), len(TOKENS)), (1 - peak) / (len(TOKENS) - 1), np.float32)
    probs[np.arange(len(frames)), frames] = peak
    return np.log(probs)
