"""Function calling on the gateway: OpenAI's `tools`, `tool_choice` and `parallel_tool_calls`, the assistant's
`tool_calls` and the `tool` role in later turns, rendered in the model's tool format and read back from its answer.

The format is the model's own when its generation.json has one (`chat.tools`: `system`, with `{tools}` where the
function list goes, `call`, with `{call}`, and `response`, with `{content}`), else the common one (functions listed
in the system message as JSON inside <tools></tools>, a call written as <tool_call>{"name", "arguments"}</tool_call>,
a result as <tool_response> in a user turn). A call that `tool_choice` requires is written by the model after its
opening tag, under a grammar: a named function's arguments match its parameter schema; `required` writes
{"name": ..., "arguments": ...} of one of the functions (several, with `parallel_tool_calls`), so the arguments
always parse and validate. `auto` renders the tools and lets the model answer or call: an answer that starts with
the call tag is read as calls."""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from tritonkit.gateway.errors import bad_request
from tritonkit.pipelines.llm.gateway.protocol import Tool
from tritonkit.pipelines.llm.gateway.structured import Grammar, schema_text
from tritonkit.pipelines.llm.runtime.grammar import JSON_OPTIONS

SYSTEM = ("You may call one or more functions to assist with the user query. The functions you may call are listed "
          "within <tools></tools> as JSON:\n<tools>\n{tools}\n</tools>\nTo call a function, answer with a JSON object "
          "with its name and arguments within <tool_call></tool_call> tags:\n<tool_call>\n"
          '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>')
CALL = "<tool_call>\n{call}\n</tool_call>"
RESPONSE = "<tool_response>\n{content}\n</tool_response>"
#: Parameters of a function that declares none: an empty object.
NO_PARAMETERS = {"type": "object", "properties": {}, "additionalProperties": False}


@dataclass(frozen=True)
class Format:
    """How the model writes tool definitions, calls and results (see the module's docstring)."""

    system: str = SYSTEM
    call: str = CALL
    response: str = RESPONSE

    @classmethod
    def of(cls, chat: dict[str, Any] | None) -> Format:
        own = (chat or {}).get("tools") or {}
        return cls(**{k: own[k] for k in ("system", "call", "response") if isinstance(own.get(k), str)})

    @property
    def opening(self) -> str:
        """What a call starts with (`<tool_call>\\n`)."""
        return self.call.partition("{call}")[0]

    @property
    def between(self) -> str:
        """What separates two calls written one after another."""
        before, _, after = self.call.partition("{call}")
        return after + "\n" + before


@dataclass(frozen=True)
class Function:
    name: str
    description: str | None
    parameters: dict[str, Any]
    strict: bool = False   # its schema compiled whole (see structured.py)

    def schema(self) -> str:
        """The parameters' schema as the json_schema input takes it."""
        return schema_text(self.parameters, self.strict)

    def definition(self) -> dict[str, Any]:
        """The function as OpenAI's tools list gives it (the model sees this)."""
        spec: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            spec["description"] = self.description
        return {"type": "function", "function": spec}


@dataclass(frozen=True)
class Tools:
    """A request's functions and what it asks of them: `choice` none, auto, required, or a function's name."""

    functions: tuple[Function, ...]
    choice: str
    parallel: bool
    format: Format = field(default_factory=Format)

    @property
    def forced(self) -> Function | None:
        """The function `tool_choice` names."""
        return next((f for f in self.functions if f.name == self.choice), None)

    @property
    def constrained(self) -> bool:
        """The answer is a call, written under a grammar (required, or a named function)."""
        return self.choice == "required" or self.forced is not None

    def head(self, function: Function) -> str:
        """The text of a call up to its arguments."""
        return '{"name": ' + json.dumps(function.name) + ', "arguments": '

    def system_text(self) -> str:
        tools = "\n".join(json.dumps(f.definition()) for f in self.functions)
        return self.format.system.replace("{tools}", tools).replace("{{", "{").replace("}}", "}")

    def prompt_tail(self) -> str:
        """What the prompt ends with after the assistant's generation prompt: the opening of the call the model must
        write (with the named function's head: the model writes its arguments), else nothing."""
        if not self.constrained:
            return ""
        forced = self.forced
        return self.format.opening + (self.head(forced) if forced is not None else "")

    def grammar(self) -> Grammar | None:
        """The grammar of a required call: a named function's arguments (its parameter schema), or one or more
        {"name", "arguments"} calls of any function."""
        forced = self.forced
        if forced is not None:
            return Grammar("json_schema", forced.schema(), "tools")
        if self.choice != "required":
            return None
        calls = " | ".join(f"{json.dumps(self.head(f))} %json{_formatted(f.schema())} \"}}\"" for f in self.functions)
        start = f"call ({json.dumps(self.format.between)} call)*" if self.parallel else "call"
        return Grammar("grammar", f"start: {start}\ncall: {calls}", "tools")

    def calls(self, text: str) -> list[dict[str, Any]] | None:
        """The calls in an answer the model wrote freely (`auto`): one that starts with the call's opening and holds
        only well-formed calls; else None (the answer is content)."""
        body = _after_opening(text, self.format.opening)
        if body is None:
            return None
        close = self.format.call.partition("{call}")[2].strip()
        found = []
        for part in body.split(self.format.opening.strip()):
            part = part.strip().removesuffix(close).strip() if close else part.strip()
            if not part:
                continue
            try:
                call = json.loads(part)
            except json.JSONDecodeError:
                return None
            if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                return None
            found.append(tool_call(call["name"], json.dumps(call.get("arguments", {}), ensure_ascii=False)))
        return found or None


def _formatted(schema: str) -> str:
    """A schema embedded in a Lark grammar writes JSON as the json_schema input does (its options in x-guidance)."""
    parsed = json.loads(schema)
    return json.dumps({**parsed, "x-guidance": {**JSON_OPTIONS, **parsed.get("x-guidance", {})}})


def _after_opening(text: str, opening: str) -> str | None:
    stripped = text.lstrip()
    return stripped if opening.strip() and stripped.startswith(opening.strip()) else None


def tool_call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function",
            "function": {"name": name, "arguments": arguments}}


def _choice(value: Any, names: list[str]) -> str:
    if value is None:
        return "auto"
    if value in ("none", "auto", "required"):
        return str(value)
    name = value.get("function", {}).get("name") if isinstance(value, dict) and value.get("type") == "function" \
        and isinstance(value.get("function"), dict) else None
    if not isinstance(name, str):
        raise bad_request("'tool_choice' must be none, auto, required or {\"type\": \"function\", \"function\": "
                          "{\"name\": ...}}", "tool_choice", "invalid_value")
    if name not in names:
        raise bad_request(f"'tool_choice' names function '{name}', which is not in tools ({', '.join(names)})",
                          "tool_choice", "invalid_value")
    return name


def tools_of(listed: list[Tool] | None, tool_choice: Any, parallel: bool | None,
             chat: dict[str, Any] | None) -> Tools | None:
    """The request's tools (None without any, or with tool_choice none); a bad one is a 400 naming it."""
    if listed is None:
        if tool_choice not in (None, "none"):
            raise bad_request("'tool_choice' needs 'tools'", "tool_choice", "invalid_value")
        return None
    functions = tuple(Function(t.function.name, t.function.description, NO_PARAMETERS if t.function.parameters is None
                               else t.function.parameters, t.function.strict is True) for t in listed)
    names = [f.name for f in functions]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise bad_request(f"'tools' names function '{duplicate}' twice", "tools", "invalid_value")
    choice = _choice(tool_choice, names)
    if choice == "none":
        return None
    return Tools(functions, choice, parallel is not False, Format.of(chat))
