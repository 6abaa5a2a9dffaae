"""Derives the runtime's chat format (runtime/chat.py) from a tokenizer's Jinja chat template, and checks it."""
import re
from typing import Any

from tritonkit.pipelines.llm.runtime.chat import format_chat

CHATML = {"message": "<|im_start|>{role}\n{content}<|im_end|>\n", "generation_prompt": "<|im_start|>assistant\n"}
CHECKS = [
    [{"role": "user", "content": "What is 2+2?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b {content}"},
     {"role": "user", "content": "c\n"}],
]


def derive(tokenizer: Any) -> dict[str, Any] | None:
    """The ChatML format with the template's default system prompt, or None when the template is not ChatML
    (the pipeline then takes raw prompts only)."""
    if not getattr(tokenizer, "chat_template", None):
        return None
    rendered = tokenizer.apply_chat_template(CHECKS[0], tokenize=False, add_generation_prompt=True)
    match = re.match(r"<\|im_start\|>system\n(.*?)<\|im_end\|>\n", rendered, re.DOTALL)
    chat = dict(CHATML, default_system=match.group(1) if match else None)
    for messages in CHECKS:
        want = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        if format_chat(chat, messages) != want:
            return None
    return chat
