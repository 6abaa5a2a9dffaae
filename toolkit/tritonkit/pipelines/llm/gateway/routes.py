"""POST /v1/chat/completions and /v1/completions: OpenAI's request checked, encoded and sent to `generate`, answered
whole (with usage) or streamed as SSE (role on the first chat delta, one finish_reason, optional usage, [DONE])."""
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tritonkit.gateway.app import Gateway, gateway_of
from tritonkit.gateway.catalog import Served
from tritonkit.gateway.disconnect import unless_disconnected
from tritonkit.gateway.errors import ApiError, bad_request
from tritonkit.gateway.params import Body, Refusal, refused_unless
from tritonkit.gateway.sse import DONE, event, sse_response
from tritonkit.pipelines.llm.gateway.answer import Reader
from tritonkit.pipelines.llm.gateway.messages import chat_messages, with_tools
from tritonkit.pipelines.llm.gateway.model import (
    OUTPUTS,
    LlmFiles,
    Sampling,
    Step,
    Totals,
    request_inputs,
)
from tritonkit.pipelines.llm.gateway.structured import grammar_of, named
from tritonkit.pipelines.llm.gateway.tools import Format, Tools, tools_of

SAMPLING = {"model", "max_tokens", "temperature", "top_p", "seed", "stop", "stream", "stream_options", "user",
            "structured_outputs"}
CHAT_SUPPORTED = SAMPLING | {"messages", "max_completion_tokens", "response_format", "tools", "tool_choice",
                             "parallel_tool_calls"}
COMPLETION_SUPPORTED = SAMPLING | {"prompt"}
_ONE = refused_unless(lambda v: v == 1, "only n=1 (one choice per request)")
_ZERO = refused_unless(lambda v: v == 0, "penalties are not implemented; send 0 or leave it out")
_NONE = refused_unless(lambda v: not v, "not implemented")
_REFUSALS: dict[str, Refusal] = {
    "n": _ONE, "presence_penalty": _ZERO, "frequency_penalty": _ZERO, "logit_bias": _NONE, "logprobs": _NONE,
    "top_logprobs": _NONE, "store": _NONE, "metadata": _NONE,
    "service_tier": refused_unless(lambda v: v in ("auto", "default"), "one tier"),
}
CHAT_REFUSALS: dict[str, Refusal] = _REFUSALS | {
    "functions": _NONE, "function_call": _NONE, "audio": _NONE, "prediction": _NONE, "reasoning_effort": _NONE,
    "web_search_options": _NONE, "modalities": refused_unless(lambda v: v == ["text"], "text only"),
}
COMPLETION_REFUSALS: dict[str, Refusal] = _REFUSALS | {
    "best_of": _ONE, "echo": _NONE, "suffix": _NONE,
}
UINT64_MAX = 2**64 - 1


def _sampling(body: Body, max_names: tuple[str, ...], chat: bool) -> Sampling:
    limits = [body.integer(name, low=1) for name in max_names]
    given = [v for v in limits if v is not None]
    return Sampling(max_tokens=given[-1] if given else None, temperature=body.number("temperature", 0.0, 2.0),
                    top_p=body.number("top_p", 0.0, 1.0), seed=body.integer("seed", 0, UINT64_MAX),
                    stop=tuple(body.strings("stop", 4)), grammar=grammar_of(body, chat))


def _include_usage(body: Body) -> bool:
    options = body.get("stream_options")
    if options is None:
        return False
    if not body.boolean("stream"):
        raise bad_request("'stream_options' is only allowed when 'stream' is true", "stream_options", "invalid_value")
    if not isinstance(options, dict) or set(options) - {"include_usage", "include_obfuscation"}:
        raise bad_request("'stream_options' takes only include_usage", "stream_options", "invalid_value")
    return bool(options.get("include_usage"))


@dataclass(frozen=True)
class Shape:
    """How one route writes its answers: chat.completion(.chunk) or text_completion."""

    chat: bool
    id: str
    model: str
    created: int

    def choice(self, text: str | None, finish: str | None, role: bool = False, whole: bool = False,
               calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """One choice: `calls` are the message's tool_calls (whole) or tool_calls deltas (streamed)."""
        if not self.chat:
            return {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
        if whole:
            message: dict[str, Any] = {"role": "assistant", "content": None if calls else text, "refusal": None}
            if calls:
                message["tool_calls"] = calls
            return {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
        delta: dict[str, Any] = {"role": "assistant"} if role else {}
        if text is not None:
            delta["content"] = text
        if calls:
            delta["tool_calls"] = calls
        return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}

    def answer(self, choices: list[dict[str, Any]], usage: dict[str, int] | None, chunk: bool) -> dict[str, Any]:
        kind = ("chat.completion.chunk" if chunk else "chat.completion") if self.chat else "text_completion"
        body: dict[str, Any] = {"id": self.id, "object": kind, "created": self.created, "model": self.model,
                                "system_fingerprint": None, "choices": choices}
        if usage is not None or not chunk:
            body["usage"] = usage
        return body


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def files_of(gateway: Gateway, served: Served) -> LlmFiles:
    """The model's chat format and tokenizer, read once per model id."""
    key = ("llm", served.id)
    if key not in gateway.cache:
        gateway.cache[key] = LlmFiles.load(gateway.config.repository)
    files = gateway.cache[key]
    assert isinstance(files, LlmFiles)
    return files


async def _respond(request: Request, gateway: Gateway, served: Served, shape: Shape, prompt: str, sampling: Sampling,
                   stream: bool, include_usage: bool, tools: Tools | None = None) -> Response:
    """The prompt encoded here (its length is the usage's prompt_tokens) and streamed to `generate`."""
    ids = files_of(gateway, served).encode(prompt)
    responses = gateway.triton.stream(served.model, request_inputs(ids, sampling), OUTPUTS)
    if not stream:
        async def collect() -> Totals:
            totals = Totals()
            async with aclosing(responses):
                async for result in responses:
                    totals.add(Step.of(result))
            return totals

        try:
            totals = await unless_disconnected(request, collect())
        except ApiError as error:
            raise named(error, sampling.grammar) from None
        text, calls = Reader(tools).read("".join(totals.text)) if shape.chat else ("".join(totals.text), [])
        body = shape.answer([shape.choice(text, _finish(totals.finish_reason, bool(calls)), whole=True, calls=calls)],
                            _usage(ids.size, totals.tokens), chunk=False)
        return JSONResponse(body)
    try:
        first: Any = await unless_disconnected(request, anext(responses))  # a refused request: a 400 before any event
    except ApiError as error:
        raise named(error, sampling.grammar) from None
    return sse_response(_events(responses, Step.of(first), shape, ids.size, include_usage, Reader(tools)))


def _finish(reason: str | None, called: bool) -> str | None:
    """OpenAI's finish_reason: tool_calls for an answer that calls, unless it was cut at max_tokens."""
    return "tool_calls" if called and reason != "length" else reason


async def _events(responses: AsyncGenerator[Any, None], first: Step, shape: Shape, prompt_tokens: int,
                  include_usage: bool, reader: Reader) -> AsyncIterator[bytes]:
    def chunk(choice: dict[str, Any]) -> bytes:
        body = shape.answer([choice], None, chunk=True)
        if include_usage:  # OpenAI: null on every chunk but the last, which has the totals and no choices
            body["usage"] = None
        return event(body)

    async with aclosing(responses):  # leaving early (the client went away) cancels the Triton request
        # chat's role delta goes out with the first text (or the finish) when the first response has one: one write
        # before the first token, not two; else alone at once
        role = chunk(shape.choice("", None, role=True)) if shape.chat else b""
        if role and not first.text and first.finish_reason is None:
            yield role
            role = b""
        totals, step = Totals(), first
        while True:
            totals.add(step)
            text, calls = reader.add(step.text) if step.text else ("", [])
            if step.finish_reason is not None:
                more, last = reader.finish() if shape.chat else ("", [])
                text, calls = text + more, calls + last
            if text or calls:
                yield role + chunk(shape.choice(text or None, None, calls=calls))
                role = b""
            if step.finish_reason is not None:
                finish = _finish(step.finish_reason, reader.called)
                yield role + chunk(shape.choice(None if shape.chat else "", finish))
                async for _ in responses:   # on to Triton's final response: its gRPC stream is then kept for reuse
                    pass
                break
            step = Step.of(await anext(responses))
        if include_usage:
            yield event(shape.answer([], _usage(prompt_tokens, totals.tokens), chunk=True))
    yield DONE


def _shape(chat: bool, served: Served) -> Shape:
    return Shape(chat, f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}", served.id, int(time.time()))


async def chat_completions(request: Request) -> Response:
    gateway = gateway_of(request)
    body = Body.parse(await request.body())
    body.check_names(CHAT_SUPPORTED, CHAT_REFUSALS)
    served = await gateway.served(body.get("model"), "llm")
    files = files_of(gateway, served)
    chat = files.generation.chat
    tools = tools_of(body, chat)
    sampling = _sampling(body, ("max_tokens", "max_completion_tokens"), chat=True)
    if tools is not None and tools.constrained:
        if sampling.grammar is not None:
            raise bad_request(f"tool_choice {tools.choice!r} makes the answer a call: leave out "
                              f"'{sampling.grammar.param}'", sampling.grammar.param, "invalid_value")
        sampling = replace(sampling, grammar=tools.grammar())
    stream, include_usage = body.boolean("stream"), _include_usage(body)
    messages = with_tools(chat_messages(body, Format.of(chat)), tools, (chat or {}).get("default_system"))
    prompt = files.chat_prompt(messages) + (tools.prompt_tail() if tools is not None else "")
    return await _respond(request, gateway, served, _shape(True, served), prompt, sampling, stream, include_usage,
                          tools)


def _prompt(body: Body) -> str:
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, list):
        raise bad_request("'prompt' takes one string here (a list of prompts or of token ids is not supported)",
                          "prompt", "unsupported_parameter")
    if not isinstance(prompt, str) or not prompt:
        raise bad_request("'prompt' must be a non-empty string", "prompt",
                          "missing_required_parameter" if prompt is None else "invalid_value")
    return prompt


async def completions(request: Request) -> Response:
    gateway = gateway_of(request)
    body = Body.parse(await request.body())
    body.check_names(COMPLETION_SUPPORTED, COMPLETION_REFUSALS)
    served = await gateway.served(body.get("model"), "llm")
    sampling = _sampling(body, ("max_tokens",), chat=False)
    stream, include_usage = body.boolean("stream"), _include_usage(body)
    return await _respond(request, gateway, served, _shape(False, served), _prompt(body), sampling, stream,
                          include_usage)


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/chat/completions": chat_completions, "/v1/completions": completions}
