"""The shipped ASR model's training data: command grammar, and espeak-ng speech synthesis with augmentation.

No speech corpus can be downloaded here, so the project synthesizes one: Debian's `espeak-ng` speaks
sentences of a small command grammar (and random word strings, so every word follows every other) in many
voices, speeds and pitches; noise, gain and silence vary each copy. Voices are an accent (`-v en-us`) plus a
variant (`+f2`); the HELDOUT_VARIANTS never reach training, so evaluation hears voices the model never heard.
espeak-ng does not say when it ignores a variant (1.51 ignores any after `en-gb`, and falls back to the plain
accent for an unknown name such as `annie`), so `check_distinct_voices` compares what each voice says.
"""
from __future__ import annotations

import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from tritonkit.pipelines.asr.commands_ctc.vocabulary import DIGITS, WORDS
from tritonkit.pipelines.asr.runtime.features import SAMPLE_RATE, resample

#: British English is `en`: espeak-ng 1.51 applies a variant after `en` but ignores it after `en-gb`.
ACCENTS = ["en-us", "en", "en-gb-scotland", "en-gb-x-gbclan", "en-gb-x-rp", "en-gb-x-gbcwmd", "en-029", "en-us-nyc"]
TRAIN_VARIANTS = ["", "m1", "m2", "m3", "m4", "m6", "m7", "f1", "f2", "f4", "f5", "klatt", "klatt2", "klatt4",
                  "adam", "Alex", "Andy", "Annie", "boris", "david", "ed", "iven", "john", "linda", "max",
                  "Michael", "paul", "rob", "robert", "steph", "zac", "aunty", "edward", "Gene", "Jacky", "Lee"]
HELDOUT_VARIANTS = ["m5", "m8", "f3", "klatt3", "iven2", "belinda", "quincy", "shelby"]


_D = "(zero|one|two|three|four|five|six|seven|eight|nine)"
#: The command grammar in the graph builder's pattern format (tritonkit/pipelines/asr/graph/grammar.py): the
#: language `grammar_sentence` samples from, written to lang/grammar.txt for G.
GRAMMAR = "\n".join([
    "# digit strings of 1-4 digits, and calls of 1-3 digits",
    _D, f"{_D} {_D}", f"{_D} {_D} {_D}", f"{_D} {_D} {_D} {_D}",
    f"call {_D}", f"call {_D} {_D}", f"call {_D} {_D} {_D}",
    "go (left|right|up|down|back|home)",
    "(play|pause|stop|next|back|repeat|louder|quieter)",
    "(play|stop|pause) music",
    "lights (on|off)",
    "turn (on|off) (lights|music)",
    "volume (up|down)",
    "(open|close) menu",
    "(yes|no|cancel|start|stop)",
]) + "\n"


def grammar_sentence(rng: random.Random) -> list[str]:
    """One sentence of the command grammar (GRAMMAR) that G, the decoder's grammar or LM, describes."""
    kind = rng.randrange(8)
    digits = lambda lo, hi: [rng.choice(DIGITS) for _ in range(rng.randint(lo, hi))]  # noqa: E731
    if kind <= 1:
        return digits(1, 4)
    if kind == 2:
        return ["call", *digits(1, 3)]
    if kind == 3:
        return ["go", rng.choice(["left", "right", "up", "down", "back", "home"])]
    if kind == 4:
        return rng.choice([["play"], ["pause"], ["stop"], ["next"], ["back"], ["repeat"], ["play", "music"],
                           ["stop", "music"], ["pause", "music"], ["louder"], ["quieter"]])
    if kind == 5:
        return rng.choice([["lights", "on"], ["lights", "off"], ["turn", "on", "lights"], ["turn", "off", "lights"],
                           ["turn", "on", "music"], ["turn", "off", "music"]])
    if kind == 6:
        return rng.choice([["volume", "up"], ["volume", "down"], ["open", "menu"], ["close", "menu"], ["go", "home"]])
    return [rng.choice(["yes", "no", "cancel", "start", "stop"])]


def training_sentence(rng: random.Random) -> list[str]:
    """Mostly grammar sentences, plus random strings of 1-4 words so the model learns words, not the grammar."""
    if rng.random() < 0.6:
        return grammar_sentence(rng)
    return [rng.choice(WORDS) for _ in range(rng.randint(1, 4))]


@dataclass(frozen=True)
class Voice:
    """espeak-ng settings for one utterance."""

    accent: str
    variant: str
    speed: int  # words per minute (-s)
    pitch: int  # 0-99 (-p)
    gap: int  # extra pause between words, 10 ms units (-g)

    @property
    def name(self) -> str:
        return self.accent + (f"+{self.variant}" if self.variant else "")


def random_voice(rng: random.Random, variants: list[str]) -> Voice:
    return Voice(rng.choice(ACCENTS), rng.choice(variants), rng.randint(130, 230), rng.randint(25, 75),
                 rng.randint(0, 12))


def synthesize(words: list[str], voice: Voice) -> np.ndarray:
    """espeak-ng's speech for `words`, float32 PCM in [-1, 1] at 16 kHz."""
    out = subprocess.run(["espeak-ng", "-v", voice.name, "-s", str(voice.speed), "-p", str(voice.pitch), "-g",
                          str(voice.gap),
                          "--stdout", " ".join(words)], check=True, capture_output=True).stdout
    rate = int.from_bytes(out[24:28], "little")
    data = out[out.index(b"data") + 8:]  # espeak-ng's streamed header leaves the data size unset
    pcm = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
    return resample(pcm, rate, SAMPLE_RATE)


#: The text every voice says for `check_distinct_voices`, at one fixed speed, pitch and gap (as the corpus passes
#: them, so a variant that differs only in what those flags override counts as the same voice).
VOICE_CHECK_WORDS = ["call", "one", "four", "go", "left"]


def check_distinct_voices(variants: list[str]) -> None:
    """Refuse a voice whose audio equals another's on VOICE_CHECK_WORDS (ValueError naming both), so a voice
    espeak-ng renders as another (ignored or unknown variant) is never counted as a voice of its own."""
    voices = [Voice(accent, variant, 175, 50, 0) for accent in ACCENTS for variant in variants]
    with ThreadPoolExecutor(4) as pool:
        audio = list(pool.map(lambda voice: synthesize(VOICE_CHECK_WORDS, voice).tobytes(), voices))
    first: dict[bytes, str] = {}
    for voice, pcm in zip(voices, audio, strict=True):
        if pcm in first:
            raise ValueError(f"voice {voice.name} sounds exactly like {first[pcm]} (espeak-ng "
                             f"{' '.join(VOICE_CHECK_WORDS)!r}): "
                             "espeak-ng ignored the variant; use another variant name")
        first[pcm] = voice.name


def augment(pcm: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random leading/trailing silence, peak gain in [0.05, 0.9] and white or brown noise at 5-40 dB SNR."""
    pad = lambda: np.zeros(int(rng.uniform(0.0, 0.3) * SAMPLE_RATE), np.float32)  # noqa: E731
    x = np.concatenate([pad(), pcm, pad()])
    x = x * (rng.uniform(0.05, 0.9) / max(float(np.abs(x).max()), 1e-6))
    noise = rng.standard_normal(x.size)
    if rng.random() < 0.5:
        noise = np.cumsum(noise)
        noise -= np.convolve(noise, np.ones(400) / 400, mode="same")  # brown noise without its drift
    power = float(np.mean(x[np.abs(x) > 0.01] ** 2)) if np.any(np.abs(x) > 0.01) else float(np.mean(x**2))
    snr_db = rng.uniform(5.0, 40.0)
    noise *= np.sqrt(power / 10 ** (snr_db / 10) / max(float(np.mean(noise**2)), 1e-12))
    return np.clip(x + noise, -1.0, 1.0).astype(np.float32)


def grammar_corpus(n: int, seed: int) -> list[str]:
    """Sentences of the grammar, one per line, for an n-gram LM trained at build time."""
    rng = random.Random(seed)
    return [" ".join(grammar_sentence(rng)) for _ in range(n)]
