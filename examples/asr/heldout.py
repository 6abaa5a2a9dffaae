"""The committed held-out set (voices never used in training): 16-bit 16 kHz WAVs with transcripts, and WER.

Written by scripts/train_asr.py, read by the tests, benchmarks and smoke checks. transcripts.tsv has one
`file<TAB>voice<TAB>words` line per WAV.
"""
from __future__ import annotations

import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HELDOUT_DIR = Path(__file__).resolve().parent / "heldout"


@dataclass(frozen=True)
class Utterance:
    path: Path
    voice: str
    words: list[str]


def read_heldout(folder: Path = HELDOUT_DIR) -> list[Utterance]:
    """The utterances listed in transcripts.tsv, in order."""
    rows = [line.split("\t") for line in (folder / "transcripts.tsv").read_text().splitlines() if line]
    return [Utterance(folder / name, voice, text.split()) for name, voice, text in rows]


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Mono 16-bit PCM as float32 in [-1, 1], and its sample rate."""
    with wave.open(str(path), "rb") as w:
        if w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise ValueError(f"{path}: expected mono 16-bit PCM, got {w.getnchannels()} channels of "
                             f"{8 * w.getsampwidth()} bits")
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768.0, w.getframerate()


def write_wav(path: Path, pcm: np.ndarray, rate: int) -> None:
    """float32 PCM in [-1, 1] as a mono 16-bit WAV."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((np.clip(pcm, -1, 1) * 32767).astype("<i2").tobytes())


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance: substitutions + deletions + insertions."""
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        prev, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (r != h))
    return row[-1]


def word_error_rate(refs: list[list[str]], hyps: list[list[str]]) -> float:
    """Word errors over all utterances divided by the reference word count."""
    return sum(edit_distance(r, h) for r, h in zip(refs, hyps, strict=True)) / max(1, sum(len(r) for r in refs))
