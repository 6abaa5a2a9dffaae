"""Three-stage synthesis: each token-id segment through an acoustic model (mel frames) and a vocoder (PCM), joined.

The two stages are plain callables (named float32/int arrays in, named arrays out), so the same code runs the
models in process (onnxruntime sessions) and served (BLS calls to Triton's `acoustic` and `vocoder`). Segments
are synthesized one by one, never batched or joined before the vocoder: a sentence's audio is then the same
whether it arrives whole or streamed, and no model sees more tokens than the frontend's `max_tokens`.
"""
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .levels import within_full_scale
from .serving import check_speed

Stage = Callable[[dict[str, np.ndarray]], Mapping[str, np.ndarray]]
#: What each stage takes and gives (see tritonkit:ensembles/tts_three_stage.yaml).
ACOUSTIC_OUTPUTS, VOCODER_OUTPUTS = ["mel"], ["audio", "sample_rate"]


@dataclass
class ThreeStage:
    """acoustic: {tokens int64 [T], pace float32 [1]} -> {mel [F, n_mels]};
    vocoder: {mel} -> {audio [S], sample_rate [1]}."""

    acoustic: Stage
    vocoder: Stage

    def segment(self, ids: Sequence[int], speed: float = 1.0) -> tuple[np.ndarray, int]:
        """One segment's float32 PCM (within full scale) and sample rate."""
        if not ids:
            raise ValueError("no token ids to synthesize")
        pace = np.array([check_speed(speed)], dtype=np.float32)
        mel = self.acoustic({"tokens": np.asarray(ids, dtype=np.int64), "pace": pace})["mel"]
        voiced = self.vocoder({"mel": np.asarray(mel, dtype=np.float32)})
        pcm = within_full_scale(np.asarray(voiced["audio"], dtype=np.float32).reshape(-1))
        return pcm, int(np.asarray(voiced["sample_rate"]).reshape(-1)[0])

    def synthesize(self, segments: Sequence[Sequence[int]], speed: float = 1.0) -> tuple[np.ndarray, int]:
        """The segments' PCM joined in speaking order, and the vocoder's sample rate."""
        parts = [self.segment(ids, speed) for ids in segments]
        if not parts:
            raise ValueError("no segments to synthesize")
        rates = {rate for _, rate in parts}
        if len(rates) != 1:
            raise ValueError(f"the vocoder answered with several sample rates {sorted(rates)}; it must have one")
        return np.concatenate([audio for audio, _ in parts]), rates.pop()
