"""An OpenAI answer from `generate`'s streams: one stream a choice, answered whole (with usage) or as SSE chunks (the
role on each choice's first delta, one finish_reason a choice, log probabilities with the tokens they belong to,
optional usage, [DONE]).

With `n` > 1 the first choice's request goes alone until its first token: its prompt is then in generate's prefix
cache, and the other choices' requests, sent together, reuse it instead of computing it again. A seeded request's
choice i samples with seed + i: the choices differ and the same request gets the same choices again. A completion's
`echo` puts the prompt before the answer (streamed: first), with its tokens' log probabilities when asked."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tritonkit.gateway.app import Gateway
from tritonkit.gateway.catalog import Served
from tritonkit.gateway.disconnect import unless_disconnected
from tritonkit.gateway.errors import ApiError
from tritonkit.gateway.sse import DONE, event, sse_response
from tritonkit.pipelines.llm.gateway.answer import Reader
from tritonkit.pipelines.llm.gateway.logprobs import chat_logprobs, completion_logprobs
from tritonkit.pipelines.llm.gateway.model import Sampling, Step, TokenLogprob, Totals, request_inputs
from tritonkit.pipelines.llm.gateway.structured import named
from tritonkit.pipelines.llm.gateway.tools import Tools

UINT64 = 2**64


@dataclass(frozen=True)
class Shape:
    """How one route writes its answers: chat.completion(.chunk) or text_completion."""

    chat: bool
    id: str
    model: str
    created: int

    def choice(self, index: int, text: str | None, finish: str | None, role: bool = False, whole: bool = False,
               calls: list[dict[str, Any]] | None = None, logprobs: dict[str, Any] | None = None) -> dict[str, Any]:
        """One choice: `calls` are the message's tool_calls (whole) or tool_calls deltas (streamed)."""
        if not self.chat:
            return {"index": index, "text": text or "", "logprobs": logprobs, "finish_reason": finish}
        if whole:
            message: dict[str, Any] = {"role": "assistant", "content": None if calls else text, "refusal": None}
            if calls:
                message["tool_calls"] = calls
            return {"index": index, "message": message, "logprobs": logprobs, "finish_reason": finish}
        delta: dict[str, Any] = {"role": "assistant"} if role else {}
        if text is not None:
            delta["content"] = text
        if calls:
            delta["tool_calls"] = calls
        return {"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": finish}

    def answer(self, choices: list[dict[str, Any]], usage: dict[str, int] | None, chunk: bool) -> dict[str, Any]:
        kind = ("chat.completion.chunk" if chunk else "chat.completion") if self.chat else "text_completion"
        body: dict[str, Any] = {"id": self.id, "object": kind, "created": self.created, "model": self.model,
                                "system_fingerprint": None, "choices": choices}
        if usage is not None or not chunk:
            body["usage"] = usage
        return body


@dataclass(frozen=True)
class Asked:
    """What the client asked of the answer besides the sampling: choices, streaming, usage, tools, log
    probabilities, the prompt echoed (its text)."""

    n: int = 1
    stream: bool = False
    include_usage: bool = False
    tools: Tools | None = None
    logprobs: bool = False
    echo: str | None = None


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _finish(reason: str | None, called: bool) -> str | None:
    """OpenAI's finish_reason: tool_calls for an answer that calls, unless it was cut at max_tokens."""
    return "tool_calls" if called and reason != "length" else reason


def _refused(error: ApiError, sampling: Sampling) -> ApiError:
    """generate's refusal of a value, named by the request parameter it came from."""
    names = {"logit_bias": "logit_bias"} | ({sampling.grammar.kind: sampling.grammar.param} if sampling.grammar else {})
    return named(error, names)


class Choice:
    """One choice's generation: its stream, what it has said so far, and how its log probabilities are written."""

    def __init__(self, index: int, responses: AsyncGenerator[Any, None], shape: Shape, asked: Asked,
                 token_bytes: Callable[[int], bytes], prompt: Sequence[int]) -> None:
        self.index, self.responses, self.shape = index, responses, shape
        self.reader = Reader(asked.tools if shape.chat else None)
        self.totals = Totals()
        self.with_logprobs, self.token_bytes, self.echo, self.prompt = asked.logprobs, token_bytes, asked.echo, prompt
        self.first: Step | None = None

    async def start(self) -> None:
        """Waits for the first response (a refused request raises here, before any answer is written)."""
        self.first = Step.of(await anext(self.responses))

    def logprobs(self, tokens: Sequence[TokenLogprob], offset: int,
                 echoed: Sequence[TokenLogprob | None] = ()) -> dict[str, Any] | None:
        """The choice's logprobs for `tokens` (None when the request did not ask), `offset` characters in; `echoed`:
        the prompt's, before them."""
        if not self.with_logprobs:
            return None
        if self.shape.chat:
            return chat_logprobs(tokens, self.token_bytes)
        ids = [*self.prompt[:len(echoed)], *(t.token for t in tokens)]
        return completion_logprobs([*echoed, *tokens], ids, self.token_bytes, offset)

    def echoed(self, step: Step) -> tuple[str, list[TokenLogprob | None]]:
        """The prompt's text and its tokens' log probabilities (the first response carries them), when echoed."""
        if self.echo is None:
            return "", []
        return self.echo, (step.prompt_logprobs or [None] * len(self.prompt)) if self.with_logprobs else []

    async def whole(self) -> dict[str, Any]:
        """The choice answered whole."""
        assert self.first is not None
        async with aclosing(self.responses):
            self.totals.add(self.first)
            async for result in self.responses:
                self.totals.add(Step.of(result))
        text, calls = self.reader.read("".join(self.totals.text))
        echo, echoed = self.echoed(self.first)
        return self.shape.choice(self.index, echo + text, _finish(self.totals.finish_reason, bool(calls)), whole=True,
                                 calls=calls, logprobs=self.logprobs(self.totals.logprobs, 0, echoed))

    async def chunks(self) -> AsyncIterator[list[dict[str, Any]]]:
        """The choice's deltas, a list per write: chat's role goes out with the first text (or the finish) when the
        first response has one, else alone at once; leaving early cancels the Triton request."""
        assert self.first is not None
        shape, step = self.shape, self.first
        echo, echoed = self.echoed(step)
        async with aclosing(self.responses):
            if echo:
                yield [shape.choice(self.index, echo, None, logprobs=self.logprobs([], 0, echoed))]
            role = shape.chat
            if role and not step.text and step.finish_reason is None and not step.logprobs:
                yield [shape.choice(self.index, "", None, role=True)]
                role = False
            while True:
                offset = len(echo) + sum(len(t) for t in self.totals.text)
                self.totals.add(step)
                text, calls = self.reader.add(step.text) if step.text else ("", [])
                if step.finish_reason is not None:
                    more, last = self.reader.finish() if shape.chat else ("", [])
                    text, calls = text + more, calls + last
                out = []
                logprobs = self.logprobs(step.logprobs, offset) if step.logprobs else None
                if role and (text or calls or logprobs or step.finish_reason is not None):
                    out.append(shape.choice(self.index, "", None, role=True))
                    role = False
                if text or calls or logprobs:
                    out.append(shape.choice(self.index, text if text or logprobs else None, None, calls=calls,
                                            logprobs=logprobs))
                if step.finish_reason is not None:
                    finish = _finish(step.finish_reason, self.reader.called)
                    out.append(shape.choice(self.index, None if shape.chat else "", finish))
                    yield out
                    async for _ in self.responses:   # on to Triton's final response: its stream is kept for reuse
                        pass
                    return
                if out:
                    yield out
                step = Step.of(await anext(self.responses))


async def respond(request: Request, gateway: Gateway, served: Served, shape: Shape, ids: Any, sampling: Sampling,
                  asked: Asked, token_bytes: Callable[[int], bytes]) -> Response:
    """`ids` (the encoded prompt: its length is the usage's prompt_tokens) sent to `generate` once a choice."""
    def choice(index: int) -> Choice:
        seeded = replace(sampling, seed=(sampling.seed + index) % UINT64) if sampling.seed is not None else sampling
        stream = gateway.triton.stream(served.model, request_inputs(ids, seeded), sampling.outputs)
        return Choice(index, stream, shape, asked, token_bytes, ids.tolist())

    choices = [choice(0)]
    try:
        await unless_disconnected(request, choices[0].start())
        choices += [choice(i) for i in range(1, asked.n)]
        if len(choices) > 1:
            await unless_disconnected(request, asyncio.gather(*(c.start() for c in choices[1:])))
    except ApiError as error:
        for started in choices:
            await started.responses.aclose()
        raise _refused(error, sampling) from None
    if not asked.stream:
        answers = await unless_disconnected(request, asyncio.gather(*(c.whole() for c in choices)))
        usage = _usage(ids.size, sum(c.totals.tokens for c in choices))
        return JSONResponse(shape.answer(list(answers), usage, chunk=False))
    return sse_response(_events(choices, shape, ids.size, asked.include_usage))


async def _merged(choices: list[Choice]) -> AsyncIterator[list[dict[str, Any]]]:
    """The choices' deltas as each produces them."""
    if len(choices) == 1:
        async for out in choices[0].chunks():
            yield out
        return
    queue: asyncio.Queue[list[dict[str, Any]] | None] = asyncio.Queue()

    async def pump(choice: Choice) -> None:
        try:
            async for out in choice.chunks():
                await queue.put(out)
        finally:
            await queue.put(None)

    tasks = [asyncio.create_task(pump(c)) for c in choices]
    try:
        running = len(tasks)
        while running:
            item = await queue.get()
            if item is None:
                running -= 1
                continue
            yield item
        for task in tasks:
            task.result()   # a choice whose stream failed fails the answer
    finally:
        for task in tasks:
            task.cancel()


async def _events(choices: list[Choice], shape: Shape, prompt_tokens: int, include_usage: bool) -> AsyncIterator[bytes]:
    def chunk(choice: dict[str, Any]) -> bytes:
        body = shape.answer([choice], None, chunk=True)
        if include_usage:  # OpenAI: null on every chunk but the last, which has the totals and no choices
            body["usage"] = None
        return event(body)

    async for out in _merged(choices):
        yield b"".join(chunk(c) for c in out)
    if include_usage:
        yield event(shape.answer([], _usage(prompt_tokens, sum(c.totals.tokens for c in choices)), chunk=True))
    yield DONE
