"""A stand-in for `triton_python_backend_utils`, which exists only inside Triton's Python backend stub.

It records the requests the runtime builds and answers them from plain functions, so the runtime's own
logic (declared callees, timeouts in microseconds, error wrapping, stream iteration) is tested here and
the real server tests in test_bls_served.py prove the same code against Triton.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

TRITONSERVER_RESPONSE_COMPLETE_FINAL = 1


class TritonError:
    INTERNAL, INVALID_ARG, UNAVAILABLE = "INTERNAL", "INVALID_ARG", "UNAVAILABLE"

    def __init__(self, message: str, code: str = INTERNAL) -> None:
        self._message, self._code = message, code

    def message(self) -> str:
        return self._message

    def code(self) -> str:
        return self._code


class Tensor:
    def __init__(self, name: str, value: np.ndarray) -> None:
        self._name, self._value = name, value

    def name(self) -> str:
        return self._name

    def as_numpy(self) -> np.ndarray:
        return self._value


class InferenceResponse:
    def __init__(self, output_tensors: list[Tensor], error: TritonError | None = None) -> None:
        self._tensors, self._error = output_tensors, error

    def has_error(self) -> bool:
        return self._error is not None

    def error(self) -> TritonError | None:
        return self._error

    def output_tensors(self) -> list[Tensor]:
        return self._tensors


def get_output_tensor_by_name(response: InferenceResponse, name: str) -> Tensor | None:
    return next((t for t in response.output_tensors() if t.name() == name), None)


#: model name -> function(inputs) -> list of responses (one for a plain model, a stream for a decoupled one)
models: dict[str, Callable[[dict[str, np.ndarray]], list[InferenceResponse]]] = {}
#: every request built, for assertions
sent: list[InferenceRequest] = []


class InferenceRequest:
    def __init__(self, model_name: str, inputs: list[Tensor], requested_output_names: list[str],
                 **options: Any) -> None:
        self.model_name, self.inputs, self.outputs, self.options = model_name, inputs, requested_output_names, options
        sent.append(self)

    def _answers(self) -> list[InferenceResponse]:
        if self.model_name not in models:
            raise RuntimeError(f"Failed for execute the inference request. Model '{self.model_name}' is not ready.")
        return models[self.model_name]({t.name(): t.as_numpy() for t in self.inputs})

    def exec(self, decoupled: bool = False) -> Any:
        answers = self._answers()
        return iter(answers) if decoupled else answers[0]
