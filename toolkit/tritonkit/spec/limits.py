"""`deploy.limits`: bounds every generated deployment applies, so overload is refused instead of queued forever.

Triton 2.51 has no request-size or connection flags; its one server-side bound on waiting requests is the
dynamic batcher's queue policy. `max_queue_size` is written into every dynamically batched model that does not
set its own, so the compose file, `tritonkit serve` and the Kubernetes manifests (all of them serve the same
built repository) refuse a request that finds the queue full with Triton's `Exceeds maximum queue size`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from tritonkit.spec.base import StrictModel
from tritonkit.spec.scheduling import QueuePolicy

if TYPE_CHECKING:
    from tritonkit.spec.model import ModelSpec


class DeployLimits(StrictModel):
    """Load bounds applied to the models of the deployment (0 = Triton's default: unbounded)."""

    max_queue_size: int = Field(default=0, ge=0, description="Requests a dynamically batched model may hold waiting; "
                                "one more is refused with 'Exceeds maximum queue size'. Written as "
                                "dynamic_batching.default_queue_policy.max_queue_size unless the model sets its own. "
                                "Sequence-batched and decoupled streaming models bound live streams with their own "
                                "max_streams parameter.")


def apply_limits(model: ModelSpec, limits: DeployLimits) -> ModelSpec:
    """The model with the deployment's queue bound, where it batches dynamically and names no bound itself."""
    batching = model.dynamic_batching
    if not limits.max_queue_size or batching is None:
        return model
    policy = batching.default_queue_policy
    if policy is not None and "max_queue_size" in policy.model_fields_set:
        return model
    bounded = (policy or QueuePolicy()).model_copy(update={"max_queue_size": limits.max_queue_size})
    return model.model_copy(update={"dynamic_batching": batching.model_copy(update={"default_queue_policy": bounded})})
