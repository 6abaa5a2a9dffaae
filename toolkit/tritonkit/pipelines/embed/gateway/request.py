"""The /v1/embeddings request as OpenAI defines it, typed: an unknown or ill-typed parameter is a 400 naming it."""
from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from tritonkit.gateway.errors import ApiError, bad_request

MAX_INPUTS = 2048   # OpenAI's limit on inputs a request
Text = Annotated[StrictStr, Field(min_length=1)]
TokenIds = Annotated[list[Annotated[StrictInt, Field(ge=0)]], Field(min_length=1)]
INPUT_SHAPES = "a string, a list of strings, a list of token ids or a list of lists of token ids"


class EmbeddingRequest(BaseModel):
    """OpenAI's parameters; `user` is accepted and unused, as it only labels the caller."""

    model_config = ConfigDict(extra="forbid")

    model: StrictStr
    input: Text | Annotated[list[Text], Field(min_length=1, max_length=MAX_INPUTS)] | TokenIds | \
        Annotated[list[TokenIds], Field(min_length=1, max_length=MAX_INPUTS)]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: Annotated[StrictInt, Field(ge=1)] | None = None
    user: StrictStr | None = None

    @classmethod
    def parse(cls, raw: bytes) -> EmbeddingRequest:
        """The body validated; the first problem as the gateway's usual 400 (null counts as absent)."""
        try:
            data = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise bad_request(f"the request body is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise bad_request("the request body must be a JSON object")
        try:
            return cls.model_validate({k: v for k, v in data.items() if v is not None})
        except ValidationError as exc:
            raise _refusal(exc) from None

    def inputs(self) -> list[str] | list[list[int]]:
        """One entry per embedding asked for: texts, or token-id lists."""
        if isinstance(self.input, str):
            return [self.input]
        if isinstance(self.input[0], int):
            return [self.input]
        return self.input


def _refusal(exc: ValidationError) -> ApiError:
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else None
    if error["type"] == "extra_forbidden":
        return bad_request(f"Unrecognized request argument supplied: {name}", name, "unknown_parameter")
    if error["type"] == "missing":
        return bad_request(f"'{name}' is required", name, "missing_required_parameter")
    if name == "input":
        return bad_request(f"'input' must be {INPUT_SHAPES}, none empty, at most {MAX_INPUTS} inputs", name,
                           "invalid_value")
    return bad_request(f"'{name}': {error['msg']}", name, "invalid_value")
