"""Schedulers: dynamic batching, sequence batching (with state) and ensemble scheduling."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from tritonkit.spec.base import StrictModel
from tritonkit.spec.datatypes import DataType


class QueuePolicy(StrictModel):
    """What happens to requests that wait too long or find the queue full."""

    timeout_action: Literal["REJECT", "DELAY"] = "REJECT"
    default_timeout_microseconds: int = Field(default=0, ge=0)
    allow_timeout_override: bool = False
    max_queue_size: int = Field(default=0, ge=0)


class DynamicBatching(StrictModel):
    """Server-side batching of independent requests."""

    preferred_batch_size: list[int] = Field(default_factory=list)
    max_queue_delay_microseconds: int = Field(default=0, ge=0)
    preserve_ordering: bool = False
    priority_levels: int = Field(default=0, ge=0)
    default_priority_level: int = Field(default=0, ge=0)
    default_queue_policy: QueuePolicy | None = None
    priority_queue_policy: dict[int, QueuePolicy] = Field(default_factory=dict)


ControlKind = Literal[
    "CONTROL_SEQUENCE_START", "CONTROL_SEQUENCE_READY", "CONTROL_SEQUENCE_END", "CONTROL_SEQUENCE_CORRID"
]


class Control(StrictModel):
    """One sequence control signal; START/READY/END default to int32 0/1, CORRID to TYPE_UINT64."""

    kind: ControlKind
    int32_false_true: list[int] = Field(default_factory=list)
    fp32_false_true: list[float] = Field(default_factory=list)
    bool_false_true: list[bool] = Field(default_factory=list)
    data_type: DataType | None = None

    @model_validator(mode="after")
    def _defaults(self) -> Control:
        if self.kind == "CONTROL_SEQUENCE_CORRID":
            if self.data_type is None:
                self.data_type = "TYPE_UINT64"
        elif not (self.int32_false_true or self.fp32_false_true or self.bool_false_true):
            self.int32_false_true = [0, 1]
        return self


class ControlInput(StrictModel):
    """The model input that carries one or more control signals."""

    name: str = Field(min_length=1)
    control: list[Control] = Field(min_length=1)


class InitialState(StrictModel):
    """The value a sequence's state starts from."""

    name: str = Field(min_length=1)
    data_type: DataType
    dims: list[int]
    zero_data: bool | None = None
    data_file: str | None = Field(default=None, description="Path relative to the spec file; copied into "
                                  "`<model>/initial_state/`.")

    @model_validator(mode="after")
    def _one_source(self) -> InitialState:
        if bool(self.zero_data) == bool(self.data_file):
            found = "zero_data and data_file are both" if self.zero_data else "neither zero_data nor data_file is"
            raise ValueError(f"{found} set; set exactly one of zero_data: true or data_file")
        return self


class State(StrictModel):
    """Implicit state carried between the requests of one sequence."""

    input_name: str = Field(min_length=1)
    output_name: str = Field(min_length=1)
    data_type: DataType
    dims: list[int]
    initial_state: list[InitialState] = Field(default_factory=list)
    use_same_buffer_for_input_output: bool = False
    use_growable_memory: bool = False


class DirectStrategy(StrictModel):
    """Each sequence owns a batch slot."""

    max_queue_delay_microseconds: int = Field(default=0, ge=0)
    minimum_slot_utilization: float = Field(default=0.0, ge=0.0, le=1.0)


class OldestStrategy(StrictModel):
    """The oldest sequences are batched together, dynamic-batching style."""

    max_candidate_sequences: int = Field(ge=1)
    preferred_batch_size: list[int] = Field(default_factory=list)
    max_queue_delay_microseconds: int = Field(default=0, ge=0)
    preserve_ordering: bool = False


class SequenceBatching(StrictModel):
    """Stateful models: requests of a sequence go to the same instance, in order."""

    max_sequence_idle_microseconds: int | None = Field(default=None, ge=0)
    control_input: list[ControlInput] = Field(default_factory=list)
    state: list[State] = Field(default_factory=list)
    iterative_sequence: bool = False
    direct: DirectStrategy | None = None
    oldest: OldestStrategy | None = None

    @model_validator(mode="after")
    def _one_strategy(self) -> SequenceBatching:
        if self.direct is not None and self.oldest is not None:
            raise ValueError("direct and oldest are both set; keep one of them")
        return self


class EnsembleStep(StrictModel):
    """One model call in an ensemble; maps its tensors to the ensemble's tensors."""

    model_name: str = Field(min_length=1)
    model_version: int = -1
    input_map: dict[str, str] = Field(default_factory=dict)
    output_map: dict[str, str] = Field(default_factory=dict)


class EnsembleScheduling(StrictModel):
    """A pipeline of models run by Triton as one model."""

    step: list[EnsembleStep] = Field(min_length=1)
