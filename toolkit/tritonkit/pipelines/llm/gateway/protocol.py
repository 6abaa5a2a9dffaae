"""The requests of /v1/chat/completions and /v1/completions as typed models: each parameter's type, range and
description, the ones refused, and the checks between them. `messages`, `tools` and `tool_choice` are read further by
messages.py and tools.py."""
from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from tritonkit.gateway.protocol import OpenAIRequest, Refused, Strings, conflict

UINT64_MAX = 2**64 - 1
#: Choices a request may ask for (n): each is a generation of its own.
MAX_CHOICES = 16
#: OpenAI's bounds: alternatives a chat token lists (top_logprobs), a completion token (logprobs); logit_bias entries.
CHAT_TOP_LOGPROBS, COMPLETION_LOGPROBS, LOGIT_BIAS_ENTRIES = 20, 5, 300
NOT_IMPLEMENTED = Refused("not implemented")
#: OpenAI's rule for a response format's or a function's name.
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _checked(rule: Any, why: str) -> AfterValidator:
    """A value `rule` rejects as a 400 saying `why`."""
    def check(value: Any) -> Any:
        if not rule(value):
            raise ValueError(why)
        return value
    return AfterValidator(check)


Name = Annotated[str, _checked(NAME.match, "must be 1-64 letters, digits, '_' or '-'")]
Text = Annotated[str, _checked(bool, "must be a non-empty string")]
Choices = Annotated[list[str], _checked(lambda v: v and all(v), "must be a non-empty list of non-empty strings")]


class Part(BaseModel):
    """An object inside a request: its names known, its types not coerced."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


class StreamOptions(Part):
    include_usage: bool | None = None
    include_obfuscation: bool | None = None


class JsonSchema(Part):
    name: Name
    schema_: dict[str, Any] = Field(alias="schema")
    strict: bool | None = None
    description: str | None = None


class ResponseFormat(Part):
    """OpenAI's `response_format`: text (no grammar), json_object (any object) or json_schema."""

    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchema | None = None

    @model_validator(mode="after")
    def _schema(self) -> ResponseFormat:
        if (self.json_schema is None) == (self.type == "json_schema"):
            raise conflict("json_schema", "goes with type json_schema, and only with it")
        return self


class FunctionSpec(Part):
    name: Name
    description: str | None = None
    parameters: dict[str, Any] | None = None   # a JSON schema; none: no arguments
    strict: bool | None = None


class Tool(Part):
    type: Literal["function"]
    function: FunctionSpec


class StructuredOutputs(Part):
    """The extension: exactly one of a regular expression, a choice list, a Lark grammar."""

    regex: Text | None = None
    choice: Choices | None = None
    grammar: Text | None = None

    @model_validator(mode="after")
    def _one(self) -> StructuredOutputs:
        if sum(getattr(self, key) is not None for key in ("regex", "choice", "grammar")) != 1:
            raise conflict("", "takes exactly one of regex, choice, grammar")
        return self

    @property
    def kind(self) -> str:
        """The one given: the name of the `generate` input it becomes."""
        return "regex" if self.regex is not None else "choice" if self.choice is not None else "grammar"


def _one_prompt(value: Any) -> Any:
    """OpenAI's prompt may be a list: one string in a list is that string; more, or token ids, are refused."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], str):
        return value[0]
    if isinstance(value, list):
        raise PydanticCustomError("unsupported", "a list of prompts or of token ids; send one string")
    return value


class GenerationRequest(OpenAIRequest):
    """What both routes take: the sampling, the choices, the streaming."""

    max_tokens: int | None = Field(None, ge=1, description="tokens to generate at most; without it the answer "
                                   "runs to its end or to the model's context")
    temperature: float | None = Field(None, ge=0, le=2, description="0 is greedy")
    top_p: float | None = Field(None, ge=0, le=1)
    seed: int | None = Field(None, ge=0, le=UINT64_MAX, description="the same seed, the same answer")
    stop: Strings | None = Field(None, max_length=4, description="strings that end the answer (not included)")
    stream: bool | None = Field(None, description="server-sent events")
    stream_options: StreamOptions | None = Field(None, description="`include_usage`: a last chunk with the usage")
    user: str | None = None
    n: int | None = Field(None, ge=1, le=MAX_CHOICES, description="choices, each a generation of its own")
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    logit_bias: dict[str, Any] | None = Field(None, description=f'{{"token id": -100..100}}, at most '
                                              f'{LOGIT_BIAS_ENTRIES}')
    structured_outputs: StructuredOutputs | None = Field(None, description="extension: one of `regex`, `choice`, "
                                                         "`grammar` (a Lark grammar) the answer matches")
    store: Annotated[Any, NOT_IMPLEMENTED] = None
    metadata: Annotated[Any, NOT_IMPLEMENTED] = None
    service_tier: Annotated[Any, Refused("one tier", ("auto", "default"))] = None

    @field_validator("logit_bias")
    @classmethod
    def _biases(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and len(value) > LOGIT_BIAS_ENTRIES:
            raise ValueError(f"at most {LOGIT_BIAS_ENTRIES} token ids")
        for token, bias in (value or {}).items():
            if not token.isdigit() or isinstance(bias, bool) or not isinstance(bias, (int, float)) \
                    or not -100 <= bias <= 100:
                raise ValueError("token ids (strings of digits) must map to biases in [-100, 100]")
        return value

    @model_validator(mode="after")
    def _stream_options(self) -> GenerationRequest:
        if self.stream_options is not None and not self.stream:
            raise conflict("stream_options", "is only allowed when 'stream' is true")
        return self

    @property
    def biases(self) -> tuple[tuple[int, float], ...]:
        return tuple((int(token), float(bias)) for token, bias in (self.logit_bias or {}).items())

    @property
    def include_usage(self) -> bool:
        return bool(self.stream_options and self.stream_options.include_usage)


class ChatRequest(GenerationRequest):
    """POST /v1/chat/completions."""

    messages: list[Any] = Field(min_length=1, description="system, developer, user, assistant (with tool_calls) "
                                "and tool turns; content a string or text parts")
    max_completion_tokens: int | None = Field(None, ge=1, description="max_tokens' newer name")
    response_format: ResponseFormat | None = Field(None, description="`text`, `json_object` or `json_schema` "
                                                   "(`name`, `schema`, `strict`)")
    tools: list[Tool] | None = Field(None, min_length=1, description="functions (`name`, `description`, a "
                                     "JSON-schema `parameters`, `strict`)")
    tool_choice: Any = Field(None, description='none, auto, required or {"type": "function", "function": '
                             '{"name": ...}}')
    parallel_tool_calls: bool | None = None
    logprobs: bool | None = Field(None, description="each token's log probability")
    top_logprobs: int | None = Field(None, ge=0, le=CHAT_TOP_LOGPROBS, description="alternatives a token lists")
    functions: Annotated[Any, NOT_IMPLEMENTED] = None
    function_call: Annotated[Any, NOT_IMPLEMENTED] = None
    audio: Annotated[Any, NOT_IMPLEMENTED] = None
    prediction: Annotated[Any, NOT_IMPLEMENTED] = None
    reasoning_effort: Annotated[Any, NOT_IMPLEMENTED] = None
    web_search_options: Annotated[Any, NOT_IMPLEMENTED] = None
    modalities: Annotated[Any, Refused("text only", (["text"],))] = None

    @model_validator(mode="after")
    def _pairs(self) -> ChatRequest:
        if self.top_logprobs is not None and not self.logprobs:
            raise conflict("top_logprobs", "needs 'logprobs': true")
        if self.structured_outputs is not None and self.response_format and self.response_format.type != "text":
            raise conflict("structured_outputs", "goes without a 'response_format': send one, not both")
        return self

    @property
    def limit(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens

    @property
    def alternatives(self) -> int | None:
        """Alternatives a token lists; None: no log probabilities."""
        return (self.top_logprobs or 0) if self.logprobs else None


class CompletionRequest(GenerationRequest):
    """POST /v1/completions."""

    prompt: Annotated[str, BeforeValidator(_one_prompt)] = Field(min_length=1, description="one string")
    echo: bool | None = Field(None, description="the answer starts with the prompt")
    logprobs: int | None = Field(None, ge=0, le=COMPLETION_LOGPROBS, description="alternatives a token lists")
    best_of: Annotated[Any, Refused("send n for several choices", (1,))] = None
    suffix: Annotated[Any, NOT_IMPLEMENTED] = None

    @property
    def limit(self) -> int | None:
        return self.max_tokens

    @property
    def alternatives(self) -> int | None:
        return self.logprobs
