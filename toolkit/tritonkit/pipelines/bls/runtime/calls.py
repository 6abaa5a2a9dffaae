"""Calls to declared models with a timeout, callee errors as TritonErrors that name the callee, streams."""
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

#: The config.pbtxt parameter holding the model's `bls.calls` (written by tritonkit build).
BLS_CALLS_PARAMETER = "bls_calls"

Tensors = dict[str, np.ndarray]


class RequestError(ValueError):
    """The client's request cannot be answered (bad input value); sent back as the response's error."""


class CallError(RuntimeError):
    """A called model failed, timed out or answered without an expected output.

    Its message carries the callee's own; the callee's error code does not survive a BLS response in
    Triton 2.51 (a callee's 400 reaches the caller as INTERNAL), so the client sees INTERNAL (HTTP 500).
    """

    def __init__(self, caller: str, callee: str, problem: str) -> None:
        super().__init__(f"model '{callee}' called by '{caller}' failed: {problem}")
        self.callee = callee


def declared_calls(model_config: Mapping[str, Any]) -> tuple[str, ...]:
    """The models named in the config's `bls_calls` parameter."""
    parameter = model_config.get("parameters", {}).get(BLS_CALLS_PARAMETER, {})
    return tuple(c.strip() for c in parameter.get("string_value", "").split(",") if c.strip())


class Callees:
    """The models this model declared in `bls.calls`, called through Triton's in-process BLS API."""

    def __init__(self, args: Mapping[str, str], pb_utils: Any) -> None:
        self.pb = pb_utils
        self.caller = args["model_name"]
        self.declared = declared_calls(json.loads(args["model_config"]))

    def call(self, model: str, inputs: Mapping[str, np.ndarray], outputs: Sequence[str],
             timeout_s: float | None = None) -> Tensors:
        """One request, one response: the named outputs, or CallError naming `model`."""
        request = self._request(model, inputs, outputs, timeout_s)
        try:
            response = request.exec()
        except Exception as exc:  # noqa: BLE001 - the stub raises for a callee that cannot take requests
            raise CallError(self.caller, model, str(exc)) from exc
        return self._outputs(model, response, outputs)

    def stream(self, model: str, inputs: Mapping[str, np.ndarray], outputs: Sequence[str],
               timeout_s: float | None = None) -> Iterator[Tensors]:
        """The responses of a decoupled model, until its final flag; the empty final response is skipped."""
        request = self._request(model, inputs, outputs, timeout_s)
        try:
            responses = request.exec(decoupled=True)
        except Exception as exc:  # noqa: BLE001
            raise CallError(self.caller, model, str(exc)) from exc
        for response in responses:
            if not response.has_error() and not response.output_tensors():
                continue
            yield self._outputs(model, response, outputs)

    def _request(self, model: str, inputs: Mapping[str, np.ndarray], outputs: Sequence[str],
                 timeout_s: float | None) -> Any:
        if model not in self.declared:
            declared = ", ".join(self.declared) or "nothing"
            raise CallError(self.caller, model, f"'{self.caller}' declares bls.calls [{declared}] only; "
                            f"add '{model}' to bls.calls in the spec")
        if timeout_s is not None and timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        tensors = [self.pb.Tensor(name, np.asarray(value)) for name, value in inputs.items()]
        options = {} if timeout_s is None else {"timeout": max(1, round(timeout_s * 1_000_000))}  # microseconds
        return self.pb.InferenceRequest(model_name=model, inputs=tensors, requested_output_names=list(outputs),
                                        **options)

    def _outputs(self, model: str, response: Any, outputs: Sequence[str]) -> Tensors:
        if response.has_error():
            raise CallError(self.caller, model, response.error().message())
        found: Tensors = {}
        for name in outputs:
            tensor = self.pb.get_output_tensor_by_name(response, name)
            if tensor is None:
                raise CallError(self.caller, model, f"the response has no output '{name}'")
            found[name] = tensor.as_numpy()
        return found


def _triton_error(pb_utils: Any, exc: CallError | RequestError) -> Any:
    """The TritonError a client sees: a bad request is INVALID_ARG (HTTP 400), a failed call INTERNAL (500)."""
    if isinstance(exc, RequestError):
        return pb_utils.TritonError(str(exc), pb_utils.TritonError.INVALID_ARG)
    return pb_utils.TritonError(str(exc))


def respond(pb_utils: Any, requests: Sequence[Any], answer: Callable[[Any], Tensors],
            decoupled: bool = False) -> list[Any] | None:
    """One response per request from `answer(request)`; CallError and RequestError become its TritonError.

    A decoupled model sends each response as the request's final one and returns None, as Triton expects.
    """
    responses = []
    for request in requests:
        try:
            tensors = answer(request)
        except (CallError, RequestError) as exc:
            responses.append(pb_utils.InferenceResponse(output_tensors=[], error=_triton_error(pb_utils, exc)))
            continue
        responses.append(pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(k, v) for k, v in tensors.items()]))
    if not decoupled:
        return responses
    for request, response in zip(requests, responses):
        request.get_response_sender().send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
    return None
