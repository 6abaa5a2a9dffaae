"""The request of /v1/embeddings as a typed model: OpenAI's parameters, each checked (a 400 naming it otherwise)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, ValidatorFunctionWrapHandler, field_validator

from tritonkit.gateway.protocol import OpenAIRequest

MAX_INPUTS = 2048   # OpenAI's limit on inputs a request
Text = Annotated[str, Field(min_length=1)]
TokenIds = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]
SHAPES = (f"a non-empty string, a list of 1 to {MAX_INPUTS} of them, a non-empty list of token ids (integers >= 0) "
          f"or a list of 1 to {MAX_INPUTS} of those")


class EmbeddingRequest(OpenAIRequest):
    """POST /v1/embeddings."""

    input: Text | Annotated[list[Text], Field(min_length=1, max_length=MAX_INPUTS)] | TokenIds | \
        Annotated[list[TokenIds], Field(min_length=1, max_length=MAX_INPUTS)] = Field(
            description=f"a string, a list of strings, the token ids of one text (its tokens without the special "
                        f"ones, which the tokenizer adds) or a list of such lists; at most {MAX_INPUTS} inputs, none "
                        "empty; longer than the model's max_seq_length is truncated")
    encoding_format: Literal["float", "base64"] | None = Field(
        None, description="float by default; base64: the vector's little-endian float32 bytes")
    dimensions: Annotated[int, Field(ge=1)] | None = Field(
        None, description="the first this many values, scaled back to unit length; at most the model's size")
    user: str | None = Field(None, description="accepted and unused")

    @field_validator("input", mode="wrap")
    @classmethod
    def _shape(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One message for the four shapes (pydantic's names each union member's failure)."""
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(f"must be {SHAPES}") from None

    def inputs(self) -> list[str] | list[list[int]]:
        """One entry per embedding asked for: texts, or token-id lists."""
        if isinstance(self.input, str):
            return [self.input]
        if isinstance(self.input[0], int):
            return [self.input]
        return self.input
