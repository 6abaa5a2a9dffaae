"""What the TTS Triton adapters share: config parameters, a file of the model's own version folder, token segments
as tensors, request text and unknown symbols as JSON. Duck-typed (no Triton import), so it is unit-testable.

Segments travel between `frontend` and `speech` as two tensors: `tokens` (all ids, in speaking order) and
`segment_lengths` (ids per model call), so one request can carry a sentence longer than the model's context.
"""
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: Files of the end-to-end model's version folder (`assets: kokoro-82m` puts them there).
MODEL_FILE, VOICES_FILE, VOCAB_FILE = "model.onnx", "voices.npz", "vocab.json"
#: Served bound on one request's text (parameter max_chars of `frontend` and `tts_stream`): `text` has no size in
#: its dims and Triton 2.51 has no request-size flag, while the work (phonemes, synthesis) grows with the text.
MAX_CHARS = 5000


def parameters(model_config: Mapping[str, Any]) -> dict[str, str]:
    """A Triton model config's `parameters` (JSON form) as plain strings."""
    return {k: v.get("string_value", "") for k, v in model_config.get("parameters", {}).items()}


def own_file(args: Mapping[str, str], name: str) -> Path:
    """`name` in this model's own version folder (`args` of `initialize`), which must hold it.

    A model reads only its own folder: Triton reading an s3:// repository downloads each model into a folder of
    its own, so a sibling's files are not there. The build copies what a model needs from another model
    (`files: {vocab.json: model:speech/vocab.json}`).
    """
    path = Path(args["model_repository"]) / args["model_version"] / name
    if not path.is_file():
        raise FileNotFoundError(f"{path.parent} has no {name}: give the model its own copy in the spec, e.g. files: "
                                f"{{{name}: model:<the model that has it>/{name}}}")
    return path


def pack_segments(segments: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(tokens int64 [n], segment_lengths int32 [segments]) of token-id segments."""
    tokens = np.array([i for segment in segments for i in segment], dtype=np.int64)
    return tokens, np.array([len(s) for s in segments], dtype=np.int32)


def unpack_segments(tokens: np.ndarray, lengths: np.ndarray, max_tokens: int) -> list[list[int]]:
    """The segments back from the two tensors; inconsistent lengths are the request's error (ValueError)."""
    tokens, lengths = np.asarray(tokens).reshape(-1), np.asarray(lengths).reshape(-1)
    if lengths.size == 0 or (lengths < 1).any() or int(lengths.sum()) != tokens.size:
        raise ValueError(f"segment_lengths {lengths.tolist()[:8]} must be positive and add up to the {tokens.size} "
                         "tokens; send the frontend's outputs unchanged")
    if tokens.min() < 0:  # onnxruntime's Gather would read a negative id from the table's end
        raise ValueError(f"token ids must be non-negative, got {int(tokens.min())}; "
                         "send the frontend's outputs unchanged")
    if (lengths > max_tokens).any():
        raise ValueError(f"a segment of {int(lengths.max())} tokens exceeds the model's {max_tokens}; "
                         "split it (the frontend does)")
    bounds = np.cumsum(lengths)[:-1]
    return [part.tolist() for part in np.split(tokens.astype(np.int64), bounds)]


def optional_input(pb_utils: Any, request: Any, name: str) -> np.ndarray | None:
    """A request's input as numpy, or None when the client left it out (`pb_utils`: Triton's module, passed in)."""
    tensor = pb_utils.get_input_tensor_by_name(request, name)
    return None if tensor is None else tensor.as_numpy()


def speed_of(values: np.ndarray | None) -> float:
    """A request's optional `speed` input ([1] or [1, 1]), 1.0 when left out; the model checks its range."""
    return float(np.asarray(values).reshape(-1)[0]) if values is not None else 1.0


def check_speed(speed: float) -> float:
    """A request's speed (1.0 is normal), refused outside 0.25 .. 4.0 (ValueError: the request's error)."""
    if not 0.25 <= speed <= 4.0:
        raise ValueError(f"speed {speed} is out of range; use 0.25 .. 4.0 (1.0 is normal)")
    return speed


def text_of(values: np.ndarray, max_chars: int | None = None) -> str:
    """The one UTF-8 string of a BYTES tensor ([1] or [1, 1]); anything else, or more than `max_chars`
    characters, is the request's error."""
    flat = np.asarray(values, dtype=object).reshape(-1)
    if flat.size != 1:
        raise ValueError(f"send one text per request (batch size 1), got {flat.size}")
    value = flat[0]
    try:
        text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
    except UnicodeDecodeError as exc:
        raise ValueError(f"text is not UTF-8 ({exc.reason} at byte {exc.start}); send UTF-8 text") from None
    if max_chars is not None and len(text) > max_chars:
        raise ValueError(f"text of {len(text)} characters is longer than the limit (max_chars) of {max_chars}; "
                         "split it into shorter requests, or raise the model's max_chars parameter")
    return text


def unknown_json(unknown: Mapping[str, int]) -> str:
    """Symbols the model's table lacks and how often, as a JSON object with sorted keys ("{}" when none)."""
    return json.dumps(dict(sorted(unknown.items())), ensure_ascii=False)
