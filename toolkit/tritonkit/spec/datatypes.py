"""Triton tensor data types, accepted as `TYPE_FP32` or the short `fp32`."""
from typing import Annotated

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from tritonkit.triton.datatypes import TRITON_TYPES


def normalize_data_type(value: object) -> str:
    """Maps `fp32`, `FP32` and `TYPE_FP32` to Triton's enum name."""
    if not isinstance(value, str):
        raise PydanticCustomError("data_type", "expected a data type name, got {value}; write one such as TYPE_FP32 "
                                  "or fp32", {"value": f"{type(value).__name__} {value!r}"})
    name = value.strip().upper()
    if not name.startswith("TYPE_"):
        name = "TYPE_" + name
    if name not in TRITON_TYPES:
        raise PydanticCustomError("data_type", "unknown data type '{value}'; use one of {choices}",
                                  {"value": value, "choices": ", ".join(t[5:] for t in TRITON_TYPES)})
    return name


DataType = Annotated[str, BeforeValidator(normalize_data_type)]
