"""`bls:` on a Python model: the models its Business Logic Scripting code calls.

Triton cannot see the models a BLS model calls (the names live in its code), so the spec declares them.
The build checks them like ensemble steps and writes them into config.pbtxt as the `bls_calls`
parameter, where smoke, load ordering and the model's own runtime helper read them back.
"""
from pydantic import Field, field_validator

from tritonkit.spec.base import StrictModel


class BlsSpec(StrictModel):
    """The models this model calls with `pb_utils.InferenceRequest(...).exec()` / `async_exec()`."""

    calls: list[str] = Field(min_length=1, description="Names of the models this model calls, each once.")

    @field_validator("calls")
    @classmethod
    def _each_once(cls, value: list[str]) -> list[str]:
        repeated = sorted({c for c in value if value.count(c) > 1})
        if repeated:
            raise ValueError(f"'{repeated[0]}' is listed more than once; list each called model once")
        return value
