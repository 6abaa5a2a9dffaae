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
from tritonkit.gateway.params import Body, Refusal, refused_unless
from tritonkit.pipelines.llm.gateway.messages import chat_messages, with_tools
from tritonkit.pipelines.llm.gateway.model import LlmFiles, Sampling
from tritonkit.pipelines.llm.gateway.respond import Asked, Shape, respond
from tritonkit.pipelines.llm.gateway.structured import grammar_of
from tritonkit.pipelines.llm.gateway.tools import Format, Tools, tools_of

SAMPLING = {"model", "max_tokens", "temperature", "top_p", "seed", "stop", "stream", "stream_options", "user",
            "structured_outputs", "n", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs"}
CHAT_SUPPORTED = SAMPLING | {"messages", "max_completion_tokens", "response_format", "tools", "tool_choice",
                             "parallel_tool_calls", "top_logprobs"}
COMPLETION_SUPPORTED = SAMPLING | {"prompt", "echo"}
_NONE = refused_unless(lambda v: not v, "not implemented")
_REFUSALS: dict[str, Refusal] = {
    "store": _NONE, "metadata": _NONE,
    "service_tier": refused_unless(lambda v: v in ("auto", "default"), "one tier"),
}
CHAT_REFUSALS: dict[str, Refusal] = _REFUSALS | {
    "functions": _NONE, "function_call": _NONE, "audio": _NONE, "prediction": _NONE, "reasoning_effort": _NONE,
    "web_search_options": _NONE, "modalities": refused_unless(lambda v: v == ["text"], "text only"),
}
COMPLETION_REFUSALS: dict[str, Refusal] = _REFUSALS | {
    "best_of": refused_unless(lambda v: v == 1, "best_of other than 1 (send n for several choices)"), "suffix": _NONE,
}
UINT64_MAX = 2**64 - 1
#: Choices a request may ask for (n): each is a generation of its own.
MAX_CHOICES = 16
#: OpenAI's bounds: alternatives a chat token lists (top_logprobs), a completion token (logprobs); logit_bias entries.
CHAT_TOP_LOGPROBS, COMPLETION_LOGPROBS, LOGIT_BIAS_ENTRIES = 20, 5, 300


def _sampling(body: Body, max_names: tuple[str, ...], chat: bool) -> Sampling:
    limits = [body.integer(name, low=1) for name in max_names]
    given = [v for v in limits if v is not None]
    return Sampling(max_tokens=given[-1] if given else None, temperature=body.number("temperature", 0.0, 2.0),
                    top_p=body.number("top_p", 0.0, 1.0), seed=body.integer("seed", 0, UINT64_MAX),
                    stop=tuple(body.strings("stop", 4)), grammar=grammar_of(body, chat),
                    presence_penalty=body.number("presence_penalty", -2.0, 2.0),
                    frequency_penalty=body.number("frequency_penalty", -2.0, 2.0), logit_bias=_logit_bias(body),
                    logprobs=_logprobs(body, chat))


def _logit_bias(body: Body) -> tuple[tuple[int, float], ...]:
    """OpenAI's {"token id": bias in [-100, 100]}."""
    value = body.get("logit_bias")
    if value is None:
        return ()
    if not isinstance(value, dict) or len(value) > LOGIT_BIAS_ENTRIES:
        raise bad_request(f"'logit_bias' must be an object of at most {LOGIT_BIAS_ENTRIES} token ids and biases",
                          "logit_bias", "invalid_value")
    biases = []
    for token, bias in value.items():
        if not token.isdigit() or isinstance(bias, bool) or not isinstance(bias, (int, float)) \
                or not -100 <= bias <= 100:
            raise bad_request(f"'logit_bias' maps token ids to biases in [-100, 100], got {token!r}: {bias!r}",
                              "logit_bias", "invalid_value")
        biases.append((int(token), float(bias)))
    return tuple(biases)


def _logprobs(body: Body, chat: bool) -> int | None:
    """Alternatives a token lists (None: no log probabilities): chat's logprobs (a boolean) and top_logprobs,
    completions' logprobs (an integer)."""
    if not chat:
        return body.integer("logprobs", 0, COMPLETION_LOGPROBS)
    top = body.integer("top_logprobs", 0, CHAT_TOP_LOGPROBS)
    if not body.boolean("logprobs"):
        if top is not None:
            raise bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs", "invalid_value")
        return None
    return top or 0


def _include_usage(body: Body) -> bool:
    options = body.get("stream_options")
    if options is None:
        return False
    if not body.boolean("stream"):
        raise bad_request("'stream_options' is only allowed when 'stream' is true", "stream_options", "invalid_value")
    if not isinstance(options, dict) or set(options) - {"include_usage", "include_obfuscation"}:
        raise bad_request("'stream_options' takes only include_usage", "stream_options", "invalid_value")
    return bool(options.get("include_usage"))


def files_of(gateway: Gateway, served: Served) -> LlmFiles:
    """The model's chat format and tokenizer, read once per model id."""
    key = ("llm", served.id)
    if key not in gateway.cache:
        gateway.cache[key] = LlmFiles.load(gateway.config.repository)
    files = gateway.cache[key]
    assert isinstance(files, LlmFiles)
    return files


async def _respond(request: Request, served: Served, chat: bool, prompt: str, sampling: Sampling,
                   body: Body, tools: Tools | None = None) -> Response:
    """The prompt encoded here and answered by `generate` (respond.py)."""
    gateway = gateway_of(request)
    files = files_of(gateway, served)
    echo = prompt if not chat and body.boolean("echo") else None
    if echo is not None and sampling.logprobs is not None:
        sampling = replace(sampling, prompt_logprobs=sampling.logprobs)
    asked = Asked(n=body.integer("n", 1, MAX_CHOICES) or 1, stream=body.boolean("stream"),
                  include_usage=_include_usage(body), tools=tools, logprobs=sampling.logprobs is not None, echo=echo)
    return await respond(request, gateway, served, _shape(chat, served), files.encode(prompt), sampling, asked,
                         files.codec.token_bytes)


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
    messages = with_tools(chat_messages(body, Format.of(chat)), tools, (chat or {}).get("default_system"))
    prompt = files.chat_prompt(messages) + (tools.prompt_tail() if tools is not None else "")
    return await _respond(request, served, True, prompt, sampling, body, tools)


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
    return await _respond(request, served, False, _prompt(body), sampling, body)


#: What the gateway serves of the pipeline: route path -> endpoint (a POST each).
ENDPOINTS = {"/v1/chat/completions": chat_completions, "/v1/completions": completions}
