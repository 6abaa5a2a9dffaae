"""An answer as it streams, split into OpenAI's content deltas and tool_calls deltas.

A call written under a grammar (tool_choice required or a named function) streams as it is generated: a call's
id and name once its head is complete, then its arguments piece by piece. With `auto` the answer is held while it
could still be the opening of a call; one that opens a call is read whole at its end, anything else streams as
content."""
from __future__ import annotations

import json
import re
from typing import Any

from tritonkit.pipelines.llm.gateway.tools import Tools, tool_call

#: The head of a call written under the `required` grammar, up to its arguments.
HEAD = re.compile(r'\{"name": ("(?:[^"\\]|\\.)*"), "arguments": ')


def json_end(text: str) -> int | None:
    """Where the JSON object or array at the start of `text` ends (None: not yet)."""
    depth, quoted, escaped = 0, False, False
    for i, char in enumerate(text):
        if quoted:
            escaped, quoted = (False, quoted) if escaped else (char == "\\", char != '"')
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


class Reader:
    """Feeds on the answer's text deltas; `add` and `finish` return (content delta, tool_calls deltas)."""

    def __init__(self, tools: Tools | None) -> None:
        self.tools = tools
        self.text = ""        # all text so far
        self.held = ""        # text not yet turned into deltas
        self.mode = "content" if tools is None else "calls" if tools.constrained else "undecided"
        self.calls = 0        # calls started
        self.state = "head"   # of a constrained call answer: head, arguments (so far in .arguments), close
        self.arguments = ""

    @property
    def called(self) -> bool:
        return self.calls > 0

    def add(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        self.text += text
        if self.mode == "content":
            return text, []
        self.held += text
        if self.mode == "undecided":
            assert self.tools is not None
            opening = self.tools.format.opening.strip()
            stripped = self.held.lstrip()
            if stripped.startswith(opening):
                self.mode = "auto-call"
            elif not opening.startswith(stripped):
                self.mode, held, self.held = "content", self.held, ""
                return held, []
            return "", []
        if self.mode == "auto-call":
            return "", []
        return "", self._calls()

    def read(self, text: str) -> tuple[str, list[dict[str, Any]]]:
        """A whole answer: its content and its calls (OpenAI's tool_calls), as the deltas of its stream add up."""
        content, deltas = self.add(text)
        more, last = self.finish()
        calls: list[dict[str, Any]] = []
        for delta in deltas + last:
            if "id" in delta:
                calls.append({k: v for k, v in delta.items() if k != "index"})
                calls[-1]["function"] = dict(delta["function"])
            else:
                calls[delta["index"]]["function"]["arguments"] += delta["function"]["arguments"]
        return content + more, calls

    def finish(self) -> tuple[str, list[dict[str, Any]]]:
        assert self.tools is not None or self.mode == "content"
        if self.mode == "calls":
            return "", self._calls()
        if self.mode in ("undecided", "auto-call"):
            calls = self.tools.calls(self.text) if self.tools is not None else None
            if calls:
                self.calls = len(calls)
                return "", [{"index": i, **call} for i, call in enumerate(calls)]
            held, self.held = self.held, ""
            return held, []
        return "", []

    def _calls(self) -> list[dict[str, Any]]:
        """Deltas for what the held text of a constrained call answer completes."""
        assert self.tools is not None
        forced = self.tools.forced
        deltas: list[dict[str, Any]] = []
        if forced is not None:   # the text is the arguments
            if not self.calls:
                self.calls = 1
                deltas.append({"index": 0, **tool_call(forced.name, "")})
            if self.held:
                deltas.append({"index": 0, "function": {"arguments": self.held}})
                self.held = ""
            return deltas
        while self.held:
            if self.state == "close":   # the call's own closing brace after its arguments
                if not self.held.startswith("}"):
                    break
                self.held, self.state = self.held[1:], "head"
                continue
            if self.state == "head":
                between = self.tools.format.between if self.calls else ""
                match = HEAD.match(self.held, len(between)) if self.held.startswith(between) else None
                if match is None:
                    break
                deltas.append({"index": self.calls, **tool_call(json.loads(match.group(1)), "")})
                self.calls += 1
                self.held, self.arguments, self.state = self.held[match.end():], "", "arguments"
                continue
            text = self.arguments + self.held
            end = json_end(text)
            piece = text[len(self.arguments):end]
            if piece:
                deltas.append({"index": self.calls - 1, "function": {"arguments": piece}})
            if end is None:
                self.arguments, self.held = text, ""
                break
            self.held, self.state = text[end:], "close"
        return deltas
