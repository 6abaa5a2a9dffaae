"""Kokoro-82M in process: token ids + voice + speed -> 24 kHz float32 PCM, whole text or sentence by sentence."""
from .kokoro import SAMPLE_RATE, KokoroModel
from .synthesis import Speech, SpeechChunk, Synthesizer

__all__ = ["SAMPLE_RATE", "KokoroModel", "Speech", "SpeechChunk", "Synthesizer"]
