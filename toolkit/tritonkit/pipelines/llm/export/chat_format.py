"""Derives the runtime's chat format (runtime/chat.py) from a tokenizer's Jinja chat template, and checks it.

The template is rendered for a few conversations whose contents are markers; what surrounds the markers is each
role's message template, the text before the first message and the generation prompt. The result is kept only
when it renders the check conversations to the template's own tokens; otherwise the pipeline takes raw prompts.
"""
from typing import Any

from tritonkit.pipelines.llm.runtime.chat import ROLES, format_chat

CHATML = {"message": "<|im_start|>{role}\n{content}<|im_end|>\n", "generation_prompt": "<|im_start|>assistant\n"}
CHECKS = [
    [{"role": "user", "content": "What is 2+2?"}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b {content}"},
     {"role": "user", "content": "c\n"}],
]
MARKS = ("\x00S\x00", "\x00U\x00", "\x00A\x00", "\x00V\x00")


def derive(tokenizer: Any) -> dict[str, Any] | None:
    """The model's chat format, or None when its template is not one message template a role (the pipeline then
    takes raw prompts only)."""
    if not getattr(tokenizer, "chat_template", None):
        return None
    bos = getattr(tokenizer, "bos_token", None)
    for generation in _generation_prompts(tokenizer):
        try:
            chat = _split(tokenizer, generation)
        except (ValueError, IndexError):
            continue
        if bos and chat.get("prefix", "").startswith(bos) and not _renders_alike(tokenizer, chat):
            chat["prefix"] = chat["prefix"][len(bos):]   # the tokenizer adds the BOS token itself when it encodes
            if not chat["prefix"]:
                del chat["prefix"]
        for trimmed in (chat, dict(chat, trim=True)):   # Gemma's template trims each message's content
            if _renders_alike(tokenizer, trimmed):
                return trimmed
    return None


def _generation_prompts(tokenizer: Any) -> list[str]:
    """What may follow a user message's template when the generation prompt is asked for: the text the prompt
    adds, where a render without it is a prefix; else each ending of the render, longest first."""
    user = [{"role": "user", "content": MARKS[1]}]
    one = _render(tokenizer, user)
    plain = str(tokenizer.apply_chat_template(user, tokenize=False, add_generation_prompt=False))
    after = _after(one, MARKS[1])
    return ([one[len(plain):]] if one.startswith(plain) else []) + [after[i:] for i in range(len(after) + 1)]


def _render(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))


def _split(tokenizer: Any, generation: str) -> dict[str, Any]:
    """Each role's template and the prefix, read off renders of marker conversations given the generation prompt."""
    s, u, a, v = MARKS
    user, assistant, later = {"role": "user", "content": u}, {"role": "assistant", "content": a}, \
        {"role": "user", "content": v}
    one, two, three = (_render(tokenizer, m) for m in ([user], [user, assistant], [user, assistant, later]))
    after_user, after_assistant = _after(one, u), _after(two, a)
    post_user = _strip_end(after_user, generation)
    post_assistant = _strip_end(after_assistant, generation)
    pre_assistant = _strip_start(_between(three, u, a), post_user)
    pre_user = _strip_start(_between(three, a, v), post_assistant)
    prefix = _strip_end(one[:one.index(u)], pre_user)
    messages: dict[str, str] = {"user": pre_user + "{content}" + post_user,
                                "assistant": pre_assistant + "{content}" + post_assistant}
    chat: dict[str, Any] = {"generation_prompt": generation, "default_system": None}
    try:
        with_system = _render(tokenizer, [{"role": "system", "content": s}, user])
    except Exception:  # noqa: BLE001 - Jinja's raise_exception: the template refuses a system message
        with_system = ""
    if with_system:
        head = with_system[:with_system.index(s)]
        post_system = _strip_end(with_system[with_system.index(s) + len(s):with_system.index(u)], pre_user)
        pre_system = pre_user.replace("user", "system")
        if not head.endswith(pre_system):
            pre_system = head[len(prefix):] if head.startswith(prefix) else head
        base = head[:len(head) - len(pre_system)]
        if prefix != base and prefix.startswith(head) and prefix.endswith(post_system):   # a default system prompt
            chat["default_system"] = prefix[len(head):len(prefix) - len(post_system)]
            prefix = base
        messages["system"] = pre_system + "{content}" + post_system
    generic = messages["user"].replace("user", "{role}")
    if all(generic.replace("{role}", role) == messages.get(role) for role in ROLES):
        chat["message"] = generic
    else:
        chat["messages"] = messages
    if prefix:
        chat["prefix"] = prefix
    return chat


def _after(text: str, mark: str) -> str:
    return text[text.index(mark) + len(mark):]


def _between(text: str, first: str, second: str) -> str:
    return text[text.index(first) + len(first):text.index(second)]


def _strip_end(text: str, end: str) -> str:
    if not text.endswith(end):
        raise ValueError("not a message template a role")
    return text[:len(text) - len(end)]


def _strip_start(text: str, start: str) -> str:
    if not text.startswith(start):
        raise ValueError("not a message template a role")
    return text[len(start):]


def _renders_alike(tokenizer: Any, chat: dict[str, Any]) -> bool:
    """Whether `chat` encodes each check conversation the template accepts to the template's own tokens."""
    backend = tokenizer.backend_tokenizer if hasattr(tokenizer, "backend_tokenizer") else None
    for messages in CHECKS:
        try:
            want = _render(tokenizer, messages)
        except Exception:  # noqa: BLE001 - a role the template refuses, which format_chat refuses too
            continue
        try:
            got = format_chat(chat, messages)
        except ValueError:
            return False
        if backend is None:
            if got != want:
                return False
        elif backend.encode(got).ids != backend.encode(want, add_special_tokens=False).ids:
            return False
    return True
