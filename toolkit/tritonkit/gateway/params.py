"""Request bodies checked the way OpenAI checks them: every name known, unsupported ones refused, types right.

A parameter this gateway does not support is a 400 naming it (never silently ignored: a misspelled
`max_token` must not fall back to the default length); a supported one with a wrong type or range likewise.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from tritonkit.gateway.errors import bad_request

#: A check of a parameter that is known but only partly supported: returns why a value is refused, or None.
Refusal = Callable[[Any], "str | None"]


def refused_unless(allowed: Callable[[Any], bool], why: str) -> Refusal:
    """A refusal for values `allowed` rejects (e.g. `n` other than 1)."""
    return lambda value: None if allowed(value) else why


class Body:
    """A JSON request body with typed getters that raise OpenAI-shaped 400s naming the parameter."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    @classmethod
    def parse(cls, raw: bytes) -> Body:
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise bad_request(f"the request body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise bad_request("the request body must be a JSON object")
        return cls(data)

    def check_names(self, supported: set[str], refusals: Mapping[str, Refusal]) -> None:
        """Unknown names and refused values of known ones are 400s; null counts as absent (OpenAI's clients send it)."""
        for name, value in self.data.items():
            if name in supported:
                continue
            if name in refusals:
                why = refusals[name](value)
                if value is not None and why is not None:
                    raise bad_request(f"'{name}' is not supported by this server: {why}", name, "unsupported_parameter")
                continue
            raise bad_request(f"Unrecognized request argument supplied: {name}", name, "unknown_parameter")

    def get(self, name: str) -> Any:
        return self.data.get(name)

    def string(self, name: str, required: bool = False) -> str | None:
        value = self.data.get(name)
        if value is None:
            if required:
                raise bad_request(f"'{name}' is required", name, "missing_required_parameter")
            return None
        if not isinstance(value, str):
            raise bad_request(f"'{name}' must be a string, got {type(value).__name__}", name, "invalid_type")
        return value

    def integer(self, name: str, low: int | None = None, high: int | None = None) -> int | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad_request(f"'{name}' must be an integer, got {json.dumps(value)}", name, "invalid_type")
        _check_range(name, value, low, high)
        return value

    def number(self, name: str, low: float | None = None, high: float | None = None) -> float | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise bad_request(f"'{name}' must be a number, got {json.dumps(value)}", name, "invalid_type")
        _check_range(name, float(value), low, high)
        return float(value)

    def boolean(self, name: str) -> bool:
        value = self.data.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise bad_request(f"'{name}' must be a boolean, got {json.dumps(value)}", name, "invalid_type")
        return value

    def strings(self, name: str, most: int) -> list[str]:
        """A string or a list of up to `most` strings (OpenAI's `stop`)."""
        value = self.data.get(name)
        if value is None:
            return []
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
            raise bad_request(f"'{name}' must be a string or a list of strings", name, "invalid_type")
        if len(items) > most:
            raise bad_request(f"'{name}' takes at most {most} strings, got {len(items)}", name, "invalid_value")
        return items

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self.string(name) or default
        if value not in choices:
            raise bad_request(f"'{name}' must be one of {', '.join(choices)}, got '{value}'", name, "invalid_value")
        return value


def _check_range(name: str, value: float, low: float | None, high: float | None) -> None:
    if (low is not None and value < low) or (high is not None and value > high):
        span = f">= {low}" if high is None else f"<= {high}" if low is None else f"{low} .. {high}"
        raise bad_request(f"'{name}' must be {span}, got {value}", name, "invalid_value")
