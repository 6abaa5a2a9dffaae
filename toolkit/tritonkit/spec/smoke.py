"""Known-answer cases in the spec: the build saves them as golden samples that `tritonkit smoke` replays."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import Field, model_validator

from tritonkit.spec.base import StrictModel

Tensors = dict[str, Any]
#: Files a tensor value may name instead of inline values: one request's tensor, without the batch dimension.
TENSOR_FILE_SUFFIXES = (".npy", ".wav")


def tensor_file(value: Any) -> str | None:
    """The path of a `{file: <path>}` tensor value (inline audio or log-probs are impractical), else None."""
    return value["file"] if isinstance(value, dict) else None


def _check_tensor_files(tensors: Tensors) -> None:
    for name, value in tensors.items():
        if not isinstance(value, dict):
            continue
        path = value.get("file")
        if set(value) != {"file"} or not isinstance(path, str) or not path.lower().endswith(TENSOR_FILE_SUFFIXES):
            raise ValueError(f"{name}: a tensor is nested lists or {{file: <path>.npy or mono 16-bit "
                             f".wav}}, got {value!r}")


class SequenceStep(StrictModel):
    """One request of a sequence and the response it must produce."""

    inputs: Tensors = Field(min_length=1)
    outputs: Tensors = Field(default_factory=dict)


class SmokeCase(StrictModel):
    """Exactly one of: a request (`inputs` + `outputs`), a sequence of requests, or a streamed request (`stream`)."""

    name: str | None = None
    inputs: Tensors = Field(default_factory=dict, description="Input name -> nested list, batch dim included when the "
                            "model batches; or {file: x.npy / mono x.wav}, one request's tensor relative to the spec "
                            "(the build adds the batch dim).")
    outputs: Tensors = Field(default_factory=dict, description="Expected output values.")
    sequence: list[SequenceStep] = Field(default_factory=list, description="Requests of one sequence, START on the "
                                         "first, END on the last.")
    stream: list[Tensors] = Field(default_factory=list, description="Expected outputs of each "
                                  "streamed response, in order.")
    atol: float = Field(default=1e-5, ge=0)
    rtol: float = Field(default=1e-5, ge=0)

    @model_validator(mode="after")
    def _one_kind(self) -> SmokeCase:
        if self.sequence and (self.inputs or self.outputs or self.stream):
            raise ValueError("a sequence case takes only sequence: steps (with their own inputs/outputs)")
        if not self.sequence and not self.inputs:
            raise ValueError("give inputs (a request) or sequence (a stateful case)")
        if self.stream and self.outputs:
            raise ValueError("a streamed case lists expected responses under stream, not outputs")
        for tensors in self.tensor_maps():
            _check_tensor_files(tensors)
        return self

    def tensor_maps(self) -> Iterator[Tensors]:
        yield self.inputs
        yield self.outputs
        for step in self.sequence:
            yield step.inputs
            yield step.outputs
        yield from self.stream

    def files(self) -> Iterator[str]:
        for tensors in self.tensor_maps():
            yield from (path for value in tensors.values() if (path := tensor_file(value)))
