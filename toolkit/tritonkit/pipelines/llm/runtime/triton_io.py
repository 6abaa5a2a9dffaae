"""Reading Triton Python-backend requests into numpy, shared by the adapters (duck-typed: no Triton import).

Every pipeline model takes one prompt per request: batched configs let Triton put several requests in one
`execute`, but a request's own batch dimension must be 1.
"""
from collections.abc import Sequence
from typing import Any

import numpy as np

from .assets import GenerationConfig
from .engine import GenerationLimitError
from .kv_cache import CacheBudgetError
from .prompts import prompt_ids
from .requests import parse_parameters, sampling_params
from .sampling import Logprob, SamplingParams
from .text import TextCodec


class RequestError(ValueError):
    """A bad request: its message goes back to the client as the response error."""


def request_inputs(request: Any, batched: bool) -> dict[str, np.ndarray]:
    """{name: array} with the batch dimension removed (requests of batch size > 1 are refused)."""
    out: dict[str, np.ndarray] = {}
    for tensor in request.inputs():
        value = tensor.as_numpy()
        if batched:
            if value.shape[0] != 1:
                raise RequestError(f"input '{tensor.name()}' has batch size {value.shape[0]}; send one prompt per "
                                   "request (batch size 1) and several requests at once instead")
            value = value[0]
        out[tensor.name()] = value
    return out


def request_parameters(request: Any) -> dict[str, Any]:
    """The request's parameters (HTTP `parameters`, gRPC `parameters=`) as a dict."""
    return parse_parameters(request.parameters())


def generation_request(request: Any, batched: bool, default_max_tokens: int | None, codec: TextCodec,
                       generation: GenerationConfig) -> tuple[np.ndarray, SamplingParams]:
    """The prompt ids (`input_ids`, or `text_input` encoded) and sampling settings of a
    `generate` request (what `Engine.admit` takes)."""
    inputs = request_inputs(request, batched)
    parameters = request_parameters(request)
    return prompt_ids(codec, generation, inputs, parameters), sampling_params(inputs, parameters, default_max_tokens)


def generation_outputs(token_ids: Sequence[int], generated: Sequence[int], finish_reason: str,
                       batched: bool) -> dict[str, np.ndarray]:
    """generate's id and reason outputs by name: new ids, all generated ids, finish reason."""
    values = {"token_ids": np.asarray(token_ids, np.int64), "generated_ids": np.asarray(generated, np.int64),
              "finish_reason": text_array(finish_reason)}
    return {name: batched_output(value, batched) for name, value in values.items()}


#: generate's log-probability outputs: of the response's generated tokens, and of the prompt's.
GENERATED_LOGPROBS = ("token_logprobs", "top_logprob_ids", "top_logprobs")
PROMPT_LOGPROBS = ("prompt_logprobs", "prompt_top_logprob_ids", "prompt_top_logprobs")


def logprob_outputs(logprobs: Sequence[Logprob | None], batched: bool,
                    names: tuple[str, str, str] = GENERATED_LOGPROBS) -> dict[str, np.ndarray]:
    """Log-probability outputs for some tokens: their logprobs [n] (NaN for a token that has none: a prompt's
    first), and the alternatives' ids and logprobs [n, k] (most likely first)."""
    width = max((len(lp.top) for lp in logprobs if lp is not None), default=0)
    ids = np.zeros((len(logprobs), width), np.int64)
    values = np.full((len(logprobs), width), -np.inf, np.float32)
    for row, lp in enumerate(logprobs):
        for col, (token, value) in enumerate(lp.top if lp is not None else ()):
            ids[row, col], values[row, col] = token, value
    chosen = np.asarray([lp.logprob if lp is not None else np.nan for lp in logprobs], np.float32)
    arrays: tuple[np.ndarray, ...] = (chosen, ids, values)
    return {name: batched_output(array, batched) for name, array in zip(names, arrays)}


def refusal(pb_utils: Any, exc: ValueError | CacheBudgetError) -> Any:
    """The TritonError for a request refused before it runs: a full server (KV budget, live-generation limit)
    is UNAVAILABLE, a bad value INVALID_ARG (gRPC INVALID_ARGUMENT, HTTP 400). Triton's default, INTERNAL
    (HTTP 500), would tell the client the server broke."""
    busy = isinstance(exc, (CacheBudgetError, GenerationLimitError))
    code = pb_utils.TritonError.UNAVAILABLE if busy else pb_utils.TritonError.INVALID_ARG
    return pb_utils.TritonError(str(exc), code)


def batched_output(value: np.ndarray, batched: bool) -> np.ndarray:
    """Adds the batch dimension back for batched configs."""
    return value[np.newaxis] if batched else value


def text_array(text: str) -> np.ndarray:
    """A one-element BYTES tensor value (UTF-8)."""
    return np.array([text.encode("utf-8")], dtype=object)
