"""The `tuned:` overlay that `tritonkit tune` writes back: winning settings per model, with provenance."""
from pydantic import Field

from tritonkit.spec.base import StrictModel
from tritonkit.spec.instances import InstanceGroup
from tritonkit.spec.model import ModelSpec, ParameterValue
from tritonkit.spec.scheduling import DynamicBatching, SequenceBatching


class Provenance(StrictModel):
    """Where and how the tuned values were measured, so a reader can judge whether they still apply."""

    date: str
    host: str
    cpu: str | None = None
    gpu: str | None = None
    model_analyzer_version: str | None = None
    objective: str | None = None
    constraints: dict[str, float] = Field(default_factory=dict)
    throughput_infer_per_s: float | None = None
    p99_latency_ms: float | None = None
    concurrency: int | None = None
    #: What the write-back decided beyond the measured variant (e.g. a spec value kept that the search did not try).
    notes: list[str] = Field(default_factory=list)


class TunedModel(StrictModel):
    """Settings that replace the model's own when the spec is built."""

    max_batch_size: int | None = Field(default=None, ge=0)
    instance_group: list[InstanceGroup] | None = None
    dynamic_batching: DynamicBatching | None = None
    #: Thread settings a joint pipeline search chose (e.g. intra_op_thread_count); merged over the model's own.
    parameters: dict[str, ParameterValue] | None = None
    #: An engine's step settings (oldest strategy's queue delay and preferred sizes) a joint search chose.
    sequence_batching: SequenceBatching | None = None
    provenance: Provenance


def apply_tuned(model: ModelSpec, tuned: TunedModel) -> ModelSpec:
    """The model with the tuned fields replacing its own (unset tuned fields leave the model's)."""
    update = {name: getattr(tuned, name) for name in ("max_batch_size", "instance_group", "dynamic_batching",
                                                      "sequence_batching") if getattr(tuned, name) is not None}
    if tuned.parameters:
        update["parameters"] = {**model.parameters, **tuned.parameters}
    return model.model_copy(update=update)
