"""POST /v1/chat/completions and /v1/completions: OpenAI's request checked, rendered and encoded, then answered by
`generate` (respond.py: whole or streamed, one or more choices)."""
import time
import uuid
from dataclasses import replace

from starlette.requests import Request
from starlette.responses import Response

from tritonkit.gateway.app import Gateway, gateway_of
from tritonkit.gateway.catalog import Served
from tritonkit.gateway.errors import bad_request
from tritonkit.gateway.protocol import Route
from tritonkit.pipelines.llm.gateway.messages import chat_messages, with_tools
from tritonkit.pipelines.llm.gateway.model import LlmFiles, Sampling
from tritonkit.pipelines.llm.gateway.protocol import ChatRequest, CompletionRequest, GenerationRequest
from tritonkit.pipelines.llm.gateway.respond import Asked, Shape, respond
from tritonkit.pipelines.llm.gateway.structured import grammar_of
from tritonkit.pipelines.llm.gateway.tools import Format, Tools, tools_of


def _sampling(body: ChatRequest | CompletionRequest) -> Sampling:
    formatted = body.response_format if isinstance(body, ChatRequest) else None
    return Sampling(max_tokens=body.limit, temperature=body.temperature, top_p=body.top_p, seed=body.seed,
                    stop=tuple(body.stop or ()), grammar=grammar_of(formatted, body.structured_outputs),
                    presence_penalty=body.presence_penalty, frequency_penalty=body.frequency_penalty,
                    logit_bias=body.biases, logprobs=body.alternatives)


def files_of(gateway: Gateway, served: Served) -> LlmFiles:
    """The model's chat format and tokenizer, read once per model id."""
    key = ("llm", served.id)
    if key not in gateway.cache:
        gateway.cache[key] = LlmFiles.load(gateway.config.repository)
    files = gateway.cache[key]
    assert isinstance(files, LlmFiles)
    return files


async def _respond(request: Request, served: Served, chat: bool, prompt: str, sampling: Sampling,
                   body: GenerationRequest, tools: Tools | None = None, echo: bool = False) -> Response:
    """The prompt encoded here and answered by `generate` (respond.py)."""
    gateway = gateway_of(request)
    files = files_of(gateway, served)
    if echo and sampling.logprobs is not None:
        sampling = replace(sampling, prompt_logprobs=sampling.logprobs)
    asked = Asked(n=body.n or 1, stream=bool(body.stream), include_usage=body.include_usage, tools=tools,
                  logprobs=sampling.logprobs is not None, echo=prompt if echo else None)
    return await respond(request, gateway, served, _shape(chat, served), files.encode(prompt), sampling, asked,
                         files.codec.token_bytes)


def _shape(chat: bool, served: Served) -> Shape:
    return Shape(chat, f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}", served.id, int(time.time()))


async def chat_completions(request: Request, body: ChatRequest) -> Response:
    gateway = gateway_of(request)
    served = await gateway.served(body.model, "llm")
    files = files_of(gateway, served)
    chat = files.generation.chat
    tools = tools_of(body.tools, body.tool_choice, body.parallel_tool_calls, chat)
    sampling = _sampling(body)
    if tools is not None and tools.constrained:
        if sampling.grammar is not None:
            raise bad_request(f"tool_choice {tools.choice!r} makes the answer a call: leave out "
                              f"'{sampling.grammar.param}'", sampling.grammar.param, "invalid_value")
        sampling = replace(sampling, grammar=tools.grammar())
    messages = with_tools(chat_messages(body.messages, Format.of(chat)), tools, (chat or {}).get("default_system"))
    prompt = files.chat_prompt(messages) + (tools.prompt_tail() if tools is not None else "")
    return await _respond(request, served, True, prompt, sampling, body, tools)


async def completions(request: Request, body: CompletionRequest) -> Response:
    served = await gateway_of(request).served(body.model, "llm")
    return await _respond(request, served, False, body.prompt, _sampling(body), body, echo=bool(body.echo))


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/chat/completions": Route(ChatRequest, chat_completions).serve,
             "/v1/completions": Route(CompletionRequest, completions).serve}
