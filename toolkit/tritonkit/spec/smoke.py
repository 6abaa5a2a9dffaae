"""Known-answer cases in the spec: the build saves them as golden samples that `tritonkit smoke` replays."""
from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from tritonkit.spec.base import StrictModel

Tensors = dict[str, Any]


class SequenceStep(StrictModel):
    """One request of a sequence and the response it must produce."""

    inputs: Tensors = Field(min_length=1)
    outputs: Tensors = Field(default_factory=dict)


class SmokeCase(StrictModel):
    """Exactly one of: a request (`inputs` + `outputs`), a sequence of requests, or a streamed request (`stream`)."""

    name: str | None = None
    inputs: Tensors = Field(default_factory=dict, description="Input name -> nested list, batch dim included when the model batches.")
    outputs: Tensors = Field(default_factory=dict, description="Expected output values.")
    sequence: list[SequenceStep] = Field(default_factory=list, description="Requests of one sequence, START on the first, END on the last.")
    stream: list[Tensors] = Field(default_factory=list, description="Expected outputs of each streamed response, in order.")
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
        return self
