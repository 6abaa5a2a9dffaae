"""Output level: no sample beyond what a 16-bit writer stores, so no writer clips the speech.

Kokoro-82M peaks above 1.0 on some short utterances (jm_kumo's "Okay." at 1.08). The gain is set per segment (one
model call), the unit that whole and streamed synthesis share, so a streamed sentence stays the whole utterance's
samples; a segment within full scale is left exactly as the model made it.
"""
import numpy as np

#: The largest float a 16-bit writer stores without clipping (32767 of 32768).
FULL_SCALE = 32767 / 32768


def within_full_scale(audio: np.ndarray) -> np.ndarray:
    """`audio` scaled down to peak at FULL_SCALE when it peaks above it, else unchanged (deterministic)."""
    peak = float(np.max(np.abs(audio))) if audio.size else 0.0
    if peak <= FULL_SCALE:
        return audio
    return np.clip(audio * np.float32(FULL_SCALE / peak), -FULL_SCALE, FULL_SCALE).astype(np.float32)
