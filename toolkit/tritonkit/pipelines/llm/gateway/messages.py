"""A chat request's `messages` as the role/content turns the model's chat format renders: OpenAI's roles, text
parts, an assistant's earlier `tool_calls` and the `tool` role's results written in the model's tool format (results
in a row share one user turn), and the request's functions listed in the system message."""
from __future__ import annotations

import json
from typing import Any

from tritonkit.gateway.errors import bad_request
from tritonkit.pipelines.llm.gateway.tools import Format, Tools

ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant", "tool": "tool"}
#: Fields each role may have besides role and content.
FIELDS = {"assistant": {"tool_calls", "refusal"}, "tool": {"tool_call_id"}}


def _content(index: int, content: Any, optional: bool = False) -> str:
    if isinstance(content, str):
        return content
    if content is None and optional:
        return ""
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text"
                                         and isinstance(p.get("text"), str) for p in content):
        return "".join(p["text"] for p in content)
    raise bad_request(f"messages[{index}].content must be a string or a list of text parts",
                      f"messages[{index}].content", "invalid_type")


def _calls(index: int, calls: Any, form: Format) -> str:
    """An assistant's earlier calls as the model writes them."""
    where = f"messages[{index}].tool_calls"
    if not isinstance(calls, list) or not calls:
        raise bad_request(f"'{where}' must be a non-empty list of calls", where, "invalid_value")
    written = []
    for number, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        arguments = function.get("arguments") if isinstance(function, dict) else None
        if not isinstance(name, str) or not isinstance(arguments, str):
            raise bad_request(f"'{where}[{number}]' must be {{\"type\": \"function\", \"id\": ..., \"function\": "
                              "{\"name\": ..., \"arguments\": \"<JSON>\"}}", f"{where}[{number}]", "invalid_value")
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError:
            raise bad_request(f"'{where}[{number}].function.arguments' is not JSON", f"{where}[{number}]",
                              "invalid_value") from None
        written.append(form.call.replace("{call}", json.dumps({"name": name, "arguments": parsed})))
    return "\n".join(written)


def chat_messages(messages: list[Any], form: Format) -> list[dict[str, str]]:
    """`messages` as role/content pairs the chat format renders; anything else is a 400 naming the message."""
    rendered: list[dict[str, str]] = []
    results = False  # the last turn holds tool results: the next result joins it
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise bad_request(f"messages[{index}] must be an object", f"messages[{index}]", "invalid_type")
        role = message.get("role")
        if role not in ROLES:
            raise bad_request(f"messages[{index}].role must be one of {', '.join(ROLES)}, got {role!r}",
                              f"messages[{index}].role", "invalid_value")
        extra = sorted(set(message) - {"role", "content"} - FIELDS.get(role, set()))
        if extra:
            raise bad_request(f"messages[{index}].{extra[0]} is not supported by this server",
                              f"messages[{index}].{extra[0]}", "unsupported_parameter")
        if role == "tool" and not isinstance(message.get("tool_call_id"), str):
            raise bad_request(f"messages[{index}].tool_call_id is required: the id of the call this answers",
                              f"messages[{index}].tool_call_id", "missing_required_parameter")
        calls = message.get("tool_calls")
        content = _content(index, message.get("content"), optional=role == "assistant" and bool(calls))
        if calls:
            content = "\n".join(part for part in (content, _calls(index, calls, form)) if part)
        if role == "tool":
            result = form.response.replace("{content}", content)
            if results:
                rendered[-1]["content"] += "\n" + result
            else:
                rendered.append({"role": "user", "content": result})
            results = True
            continue
        results = False
        rendered.append({"role": ROLES[role], "content": content})
    return rendered


def with_tools(messages: list[dict[str, str]], tools: Tools | None, default_system: str | None) -> list[dict[str, str]]:
    """The functions listed in the system message (after the request's own system text, or the model's default)."""
    if tools is None:
        return messages
    if messages and messages[0]["role"] == "system":
        first, rest = messages[0]["content"], messages[1:]
    else:
        first, rest = default_system or "", messages
    return [{"role": "system", "content": "\n\n".join(p for p in (first, tools.system_text()) if p)}, *rest]
