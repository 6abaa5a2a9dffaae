"""Chat prompts from role/content messages, without Jinja: each message is one template string.

`generation.json` holds `{"message": "<|im_start|>{role}\\n{content}<|im_end|>\\n", "generation_prompt": ...,
"default_system": ...}`, or for a template whose roles differ in more than their name (Gemma's assistant is
`model`, Phi-3's roles are tokens) one template a role, `"messages": {"user": ..., "assistant": ...}`, and the
text before the first message in `"prefix"`; a role the template refuses has no entry. `prepare` derives it from
the model's own chat template and checks that both render the same conversations, so the Triton container needs
no Jinja.
"""
from typing import Any

ROLES = ("system", "user", "assistant")


def _message(template: str, role: str, content: str) -> str:
    prefix, _, suffix = template.partition("{content}")
    return prefix.replace("{role}", role) + content + suffix.replace("{role}", role)


def _template(chat: dict[str, Any], role: str) -> str | None:
    """The role's message template, None when the model's chat format has no such role."""
    return chat["messages"].get(role) if "messages" in chat else chat["message"]


def format_chat(chat: dict[str, Any], messages: list[dict[str, str]], add_generation_prompt: bool = True) -> str:
    """The prompt text for `messages` ([{"role": ..., "content": ...}]) in the model's chat format."""
    parts = [chat.get("prefix", "")]
    default_system = chat.get("default_system")
    if default_system and (not messages or messages[0].get("role") != "system"):
        parts.append(_message(str(_template(chat, "system")), "system", default_system))
    for index, message in enumerate(messages):
        role, content = message.get("role"), message.get("content")
        if role not in ROLES or not isinstance(content, str):
            raise ValueError(f"message {index} needs role one of {', '.join(ROLES)} and string content, "
                             f"got {message!r}")
        template = _template(chat, role)
        if template is None:
            raise ValueError(f"message {index}: this model's chat template has no '{role}' role; "
                             f"use {' or '.join(r for r in ROLES if _template(chat, r) is not None)}")
        parts.append(_message(template, role, content.strip() if chat.get("trim") else content))
    if add_generation_prompt:
        parts.append(chat["generation_prompt"])
    return "".join(parts)
