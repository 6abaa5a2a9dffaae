"""A request's prompt as token ids: `input_ids` as given, or `text_input` (raw, or a chat message) tokenized.

Used by the `generate` adapter; plain Python so the chat wrapping is tested outside Triton.
"""
from collections.abc import Mapping
from typing import Any

import numpy as np

from .assets import GenerationConfig
from .chat import format_chat
from .requests import flag, text
from .text import TextCodec


def prompt_text(generation: GenerationConfig, inputs: Mapping[str, np.ndarray],
                parameters: Mapping[str, Any]) -> str | None:
    """`text_input`, wrapped in the chat format (with `system_prompt`) when `chat` is true; None when absent."""
    prompt = text(inputs, parameters, "text_input")
    if prompt is None or not flag(inputs, parameters, "chat"):
        return prompt
    if not generation.chat:
        raise ValueError(f"model '{generation.name}' has no chat format; send a raw prompt (chat: false)")
    system = text(inputs, parameters, "system_prompt")
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    return format_chat(generation.chat, messages)


def prompt_ids(codec: TextCodec, generation: GenerationConfig, inputs: Mapping[str, np.ndarray],
               parameters: Mapping[str, Any]) -> np.ndarray:
    """int64 ids of the prompt; ValueError when the request has neither `input_ids` nor `text_input`, or it is empty."""
    if "input_ids" in inputs:
        ids = np.asarray(inputs["input_ids"], dtype=np.int64).reshape(-1)
    else:
        prompt = prompt_text(generation, inputs, parameters)
        if prompt is None:
            raise ValueError("send 'text_input' (or 'input_ids')")
        ids = codec.encode(prompt)
    if ids.size == 0:
        raise ValueError("the prompt is empty")
    return ids
