"""One onnxruntime session over Kokoro-82M (int8) and its voices: token ids -> float32 PCM at 24 kHz.

The model takes `tokens` int64 [1, n+2] (the ids wrapped in pad id 0), `style` float32 [1, 256] and `speed`
float32 [1], and returns `audio` float32 [samples]. A voice is a table of style vectors [510, 1, 256], one
per input length: the row for a sequence of n symbols is row n-1.
"""
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..frontend.symbols import PAD_ID
from .levels import within_full_scale
from .serving import check_speed

SAMPLE_RATE = 24000
_INPUTS = {"tokens", "style", "speed"}


class KokoroModel:
    """Kokoro-82M on the CPU with explicit thread counts (0 intra-op threads: onnxruntime's default, all cores)."""

    def __init__(self, model_path: str | Path, voices_path: str | Path, intra_op_threads: int = 0,
                 spin: bool = True) -> None:
        import onnxruntime as ort
        from onnxruntime.capi.onnxruntime_pybind11_state import InvalidArgument

        options = ort.SessionOptions()
        if intra_op_threads > 0:
            options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        if not spin:  # idle workers sleep: the served default, leaving the cores to the frontend and the stub
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._invalid_argument = InvalidArgument
        self.session = ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
        names = {i.name for i in self.session.get_inputs()}
        if not _INPUTS <= names:
            raise ValueError(f"{model_path} is not Kokoro-82M: inputs {sorted(names)}, expected {sorted(_INPUTS)}")
        with np.load(voices_path) as table:
            self.voices = {name: np.asarray(table[name], dtype=np.float32).reshape(-1, 256) for name in table.files}

    def style(self, voice: str, length: int) -> np.ndarray:
        """The voice's style vector for a sequence of `length` symbols, [1, 256]."""
        if voice not in self.voices:
            raise ValueError(f"unknown voice {voice!r}; choose one of {', '.join(sorted(self.voices))}")
        table = self.voices[voice]
        return table[min(max(length, 1), len(table)) - 1][None, :]

    def synthesize(self, ids: Sequence[int], voice: str, speed: float = 1.0) -> np.ndarray:
        """Float32 PCM at 24 kHz for one segment of at most 510 ids, within full scale."""
        if not ids:
            raise ValueError("no token ids to synthesize")
        check_speed(speed)
        tokens = np.array([[PAD_ID, *ids, PAD_ID]], dtype=np.int64)
        feed = {"tokens": tokens, "style": self.style(voice, len(ids)), "speed": np.array([speed], dtype=np.float32)}
        try:
            (audio,) = self.session.run(["audio"], feed)
        except self._invalid_argument as exc:  # onnxruntime's INVALID_ARGUMENT: an id past the embedding table
            raise ValueError(f"token ids {list(ids)[:8]} are not all in the model's table ({exc}); "
                             "send the frontend's outputs unchanged") from None
        return within_full_scale(np.asarray(audio, dtype=np.float32).reshape(-1))
