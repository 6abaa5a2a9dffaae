"""Structured output on the gateway: OpenAI's `response_format` (JSON mode, JSON schemas) and this gateway's
`structured_outputs` extension (a regular expression, a choice list, a Lark grammar) as the grammar input `generate`
takes; the engine compiles it and masks every token (docs/pipelines/llm.md, constrained output)."""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tritonkit.gateway.errors import ApiError, bad_request
from tritonkit.pipelines.llm.gateway.protocol import ResponseFormat, StructuredOutputs

#: JSON mode: any JSON object.
JSON_OBJECT = {"type": "object"}


@dataclass(frozen=True)
class Grammar:
    """What `generate` constrains the output to: `kind` its input's name, `value` the input's text (or the choices),
    `param` the request parameter it came from (a refusal names it)."""

    kind: str
    value: str | tuple[str, ...]
    param: str


def schema_text(schema: Any, strict: bool) -> str:
    """The schema's JSON text; a non-strict schema lets the compiler skip keywords it does not implement (OpenAI's
    strict mode refuses what it cannot guarantee, so strict refuses them too)."""
    if not strict and isinstance(schema, dict):
        schema = {**schema, "x-guidance": {"lenient": True, **schema.get("x-guidance", {})}}
    return json.dumps(schema)


def grammar_of(formats: ResponseFormat | None, extension: StructuredOutputs | None) -> Grammar | None:
    """The request's grammar: `response_format` (chat) or `structured_outputs` (the request allows one)."""
    if extension is not None:
        key = extension.kind
        value = getattr(extension, key)
        return Grammar(key, tuple(value) if key == "choice" else value, f"structured_outputs.{key}")
    if formats is None or formats.type == "text":
        return None
    if formats.json_schema is None:
        return Grammar("json_schema", json.dumps(JSON_OBJECT), "response_format")
    return Grammar("json_schema", schema_text(formats.json_schema.schema_, bool(formats.json_schema.strict)),
                   "response_format")


def named(error: ApiError, names: Mapping[str, str]) -> ApiError:
    """generate's refusal of a request value (its message starts with the input's name) as a 400 naming the request
    parameter it came from (`names`: input -> parameter); any other error as it is."""
    if error.status != 400:
        return error
    _, _, reason = error.message.partition("': ")
    param = next((p for kind, p in names.items() if reason.startswith(kind)), None)
    if param is None:
        return error
    return bad_request(f"'{param}' is refused by the model: {reason}", param, "invalid_value")
