"""Structured output on the gateway: OpenAI's `response_format` (JSON mode, JSON schemas) and this gateway's
`structured_outputs` extension (a regular expression, a choice list, a Lark grammar) as the grammar input `generate`
takes; the engine compiles it and masks every token (docs/pipelines/llm.md, constrained output)."""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tritonkit.gateway.errors import ApiError, bad_request

#: JSON mode: any JSON object.
JSON_OBJECT = {"type": "object"}
#: `structured_outputs` keys and the `generate` input each becomes.
EXTENSION = {"regex": "regex", "choice": "choice", "grammar": "grammar"}
#: OpenAI's rule for a response format's name.
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


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


def _json_schema(value: Any) -> Grammar:
    where = "response_format.json_schema"
    if not isinstance(value, dict):
        raise bad_request(f"'{where}' must be an object with name and schema", where, "invalid_type")
    extra = sorted(set(value) - {"name", "schema", "strict", "description"})
    if extra:
        raise bad_request(f"'{where}.{extra[0]}' is not a known field", f"{where}.{extra[0]}", "unknown_parameter")
    name = value.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise bad_request(f"'{where}.name' must be 1-64 letters, digits, '_' or '-', got {json.dumps(name)}",
                          f"{where}.name", "invalid_value")
    schema, strict = value.get("schema"), value.get("strict")
    if not isinstance(schema, dict):
        raise bad_request(f"'{where}.schema' must be a JSON schema object", f"{where}.schema",
                          "missing_required_parameter" if schema is None else "invalid_type")
    if strict is not None and not isinstance(strict, bool):
        raise bad_request(f"'{where}.strict' must be a boolean", f"{where}.strict", "invalid_type")
    return Grammar("json_schema", schema_text(schema, bool(strict)), "response_format")


def response_format(value: dict[str, Any] | None) -> Grammar | None:
    """`response_format`: text (none), json_object (any object) or json_schema; anything else a 400 naming it."""
    if value is None:
        return None
    kind = value.get("type")
    known = {"text": {"type"}, "json_object": {"type"}, "json_schema": {"type", "json_schema"}}
    if kind not in known:
        raise bad_request("'response_format.type' must be one of text, json_object, json_schema, got "
                          f"{json.dumps(kind)}", "response_format.type", "invalid_value")
    extra = sorted(set(value) - known[kind])
    if extra:
        raise bad_request(f"'response_format.{extra[0]}' is not a field of a {kind} response format",
                          f"response_format.{extra[0]}", "unknown_parameter")
    if kind == "text":
        return None
    if kind == "json_object":
        return Grammar("json_schema", json.dumps(JSON_OBJECT), "response_format")
    return _json_schema(value.get("json_schema"))


def structured_outputs(value: dict[str, Any] | None) -> Grammar | None:
    """The extension `structured_outputs`: exactly one of {"regex": str}, {"choice": [str, ...]}, {"grammar": str}
    (a Lark grammar)."""
    if value is None:
        return None
    keys = sorted(value)
    if len(keys) != 1 or keys[0] not in EXTENSION:
        raise bad_request("'structured_outputs' takes exactly one of regex, choice, grammar", "structured_outputs",
                          "invalid_value")
    key = keys[0]
    item = value[key]
    where = f"structured_outputs.{key}"
    if key == "choice":
        if not isinstance(item, list) or not item or not all(isinstance(c, str) and c for c in item):
            raise bad_request(f"'{where}' must be a non-empty list of non-empty strings", where, "invalid_value")
        return Grammar("choice", tuple(item), where)
    if not isinstance(item, str) or not item:
        raise bad_request(f"'{where}' must be a non-empty string", where, "invalid_value")
    return Grammar(EXTENSION[key], item, where)


def grammar_of(formats: dict[str, Any] | None, extension_value: dict[str, Any] | None) -> Grammar | None:
    """The request's grammar: `response_format` (chat) or `structured_outputs`, not both."""
    formatted = response_format(formats)
    extension = structured_outputs(extension_value)
    if formatted is not None and extension is not None:
        raise bad_request("send either 'response_format' or 'structured_outputs', not both", "structured_outputs",
                          "invalid_value")
    return formatted or extension


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
