"""Warmup requests Triton runs at load time, so the first user request is not the slow one."""
from __future__ import annotations

from pydantic import Field, model_validator

from tritonkit.spec.base import StrictModel
from tritonkit.spec.datatypes import DataType


class WarmupInput(StrictModel):
    """Data for one input of a warmup request: zeros, random, or a raw file copied into `<model>/warmup/`."""

    data_type: DataType
    dims: list[int]
    zero_data: bool | None = None
    random_data: bool | None = None
    input_data_file: str | None = Field(default=None, description="Path relative to the spec file.")

    @model_validator(mode="after")
    def _one_source(self) -> WarmupInput:
        chosen = [n for n in ("zero_data", "random_data", "input_data_file") if getattr(self, n)]
        if len(chosen) != 1:
            found = " and ".join(chosen) + " are both set" if chosen else "no data source is set"
            raise ValueError(f"{found}; set exactly one of zero_data: true, random_data: true or input_data_file")
        return self


class Warmup(StrictModel):
    """One warmup sample."""

    name: str = Field(min_length=1)
    batch_size: int = Field(default=1, ge=0)
    inputs: dict[str, WarmupInput] = Field(min_length=1)
    count: int = Field(default=1, ge=1)
