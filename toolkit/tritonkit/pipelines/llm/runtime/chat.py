"""Chat prompts from role/content messages, without Jinja: each message is one template string.

`generation.json` holds `{"message": "<|im_start|>{role}\\n{content}<|im_end|>\\n", "generation_prompt": ...,
"default_system": ...}`; `prepare` derives it from the model's own chat template and checks that both
render the same conversations, so the Triton container needs no Jinja.
"""
from typing import Any

ROLES = ("system", "user", "assistant")


def _message(template: str, role: str, content: str) -> str:
    prefix, _, suffix = template.partition("{content}")
    return prefix.replace("{role}", role) + content + suffix.replace("{role}", role)


def format_chat(chat: dict[str, Any], messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """The prompt text for `messages` ([{"role": ..., "content": ...}]) in the model's chat format."""
    parts = []
    default_system = chat.get("default_system")
    if default_system and (not messages or messages[0].get("role") != "system"):
        parts.append(_message(chat["message"], "system", default_system))
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise ValueError(f"message {index} needs role one of {', '.join(ROLES)} and string content, "
                             f"got {message!r}")
        parts.append(_message(chat["message"], role, content))
    if add_generation_prompt:
        parts.append(chat["generation_prompt"])
    return "".join(parts)
