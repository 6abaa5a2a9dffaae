"""Request bodies as typed pydantic models, checked the way OpenAI checks them: every name known, unsupported ones
refused, types and ranges right; each failure a 400 in OpenAI's shape naming the parameter.

A route's model is the one place its parameters are listed: the checks, the 400s and the docs' parameter tables
(docs/hooks/gateway_reference.py) all come from it. A parameter this gateway does not support is a 400 naming it,
never silently ignored: a misspelled `max_token` must not fall back to the default length. Null counts as absent
(OpenAI's clients send it).
"""
from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Self, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, GetCoreSchemaHandler, ValidationError
from pydantic_core import CoreSchema, ErrorDetails, PydanticCustomError, core_schema
from starlette.requests import Request
from starlette.responses import Response

from tritonkit.gateway.errors import ApiError, bad_request


def listed(value: Any) -> Any:
    """One string where a list is expected: a list of it."""
    return [value] if isinstance(value, str) else value


#: A string or a list of strings (OpenAI's `stop`), read as the list.
Strings = Annotated[list[str], BeforeValidator(listed)]


@dataclass(frozen=True)
class Refused:
    """Marks a parameter OpenAI defines that this server does not support: absent, null, or one of `allowed` (by
    default any false value: `false`, `""`, `[]`) passes; anything else is a 400 `unsupported_parameter` saying
    `why`."""

    why: str
    allowed: tuple[Any, ...] = ()

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def check(self, value: Any) -> Any:
        if value is None or (value in self.allowed if self.allowed else not value):
            return value
        raise PydanticCustomError("unsupported", self.why)


class OpenAIRequest(BaseModel):
    """A route's request: unknown names are refused, JSON types are not coerced (`"5"` is not an integer)."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True, populate_by_name=True)

    model: str = Field(description="a model id of `GET /v1/models`")

    @classmethod
    async def read(cls, request: Request) -> Self:
        """The request's JSON body, checked."""
        raw = await request.body()
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise bad_request(f"the request body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise bad_request("the request body must be a JSON object")
        return cls.checked(data)

    @classmethod
    def checked(cls, data: Mapping[str, Any]) -> Self:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise refusal(exc) from None


def conflict(param: str, why: str) -> PydanticCustomError:
    """A model check's error between its fields, naming `param` (a field of the model, "" for the model itself):
    "'top_logprobs' needs 'logprobs': true"."""
    return PydanticCustomError("conflict", why, {"param": param})


def refusal(exc: ValidationError) -> ApiError:
    """The first problem as OpenAI's 400 (an unknown or unsupported name before a bad value)."""
    errors = exc.errors()
    first = next((e for e in errors if e["type"] in ("extra_forbidden", "unsupported")), errors[0])
    param = _param(first)
    kind = first["type"]
    if kind == "extra_forbidden":
        return bad_request(f"Unrecognized request argument supplied: {param}", param, "unknown_parameter")
    if kind == "missing":
        return bad_request(f"'{param}' is required", param, "missing_required_parameter")
    if kind == "unsupported":
        return bad_request(f"'{param}' is not supported by this server: {first['msg']}", param, "unsupported_parameter")
    if kind == "conflict":
        return bad_request(f"'{param}' {first['msg']}", param, "invalid_value")
    reason = first["msg"].removeprefix("Value error, ")
    code = "invalid_type" if kind.endswith("_type") else "invalid_value"
    return bad_request(f"'{param}': {reason}, got {_shown(first['input'])}", param, code)


def _param(error: ErrorDetails) -> str:
    """The location as OpenAI names a parameter: `messages[0].role`."""
    named = error.get("ctx", {}).get("param")   # a conflict's field, after the model's place
    text = ""
    for part in (*error["loc"], *([named] if named else [])):
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 80 else text[:77] + "..."


B = TypeVar("B", bound=OpenAIRequest)


@dataclass(frozen=True)
class Route(Generic[B]):
    """A route that reads its request as `request_model` and hands it, checked, to `handle`; `serve` is the
    endpoint (a bound method: Starlette runs functions and methods as endpoints, other callables as ASGI apps)."""

    request_model: type[B]
    handle: Callable[[Request, B], Awaitable[Response]]

    async def serve(self, request: Request) -> Response:
        return await self.handle(request, await self.request_model.read(request))


def request_model(endpoint: Callable[..., Any]) -> type[OpenAIRequest] | None:
    """The request model of an endpoint made by `Route` (None for any other)."""
    route = getattr(endpoint, "__self__", None)
    return route.request_model if isinstance(route, Route) else None
