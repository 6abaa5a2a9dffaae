"""Model inputs, outputs and batch inputs/outputs (Triton's ModelInput, ModelOutput, BatchInput, BatchOutput)."""
from typing import Literal

from pydantic import Field

from tritonkit.spec.base import StrictModel
from tritonkit.spec.datatypes import DataType


class Reshape(StrictModel):
    """The shape the backend sees when it differs from the shape clients send."""

    shape: list[int]


class TensorInput(StrictModel):
    """One model input."""

    name: str = Field(min_length=1)
    data_type: DataType
    dims: list[int] = Field(description="Shape without the batch dimension; -1 marks a variable dimension.")
    format: Literal["FORMAT_NONE", "FORMAT_NHWC", "FORMAT_NCHW"] | None = None
    reshape: Reshape | None = None
    is_shape_tensor: bool = False
    allow_ragged_batch: bool = False
    optional: bool = False


class TensorOutput(StrictModel):
    """One model output."""

    name: str = Field(min_length=1)
    data_type: DataType
    dims: list[int]
    reshape: Reshape | None = None
    label_filename: str | None = Field(
        default=None, description="Class names, one per line (path relative to the spec): the build copies the file "
        "into the model folder, where Triton reads it at load and refuses the model without it.")
    is_shape_tensor: bool = False


BatchInputKind = Literal["BATCH_ELEMENT_COUNT", "BATCH_ACCUMULATED_ELEMENT_COUNT",
                         "BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO", "BATCH_MAX_ELEMENT_COUNT_AS_SHAPE",
                         "BATCH_ITEM_SHAPE", "BATCH_ITEM_SHAPE_FLATTEN"]


class BatchInput(StrictModel):
    """An input Triton computes from the batch (ragged batching support)."""

    kind: BatchInputKind
    target_name: list[str] = Field(min_length=1)
    data_type: DataType
    source_input: list[str] = Field(default_factory=list)


class BatchOutput(StrictModel):
    """An output Triton scatters back per request (ragged batching support)."""

    target_name: list[str] = Field(min_length=1)
    kind: Literal["BATCH_SCATTER_WITH_INPUT_SHAPE"] = "BATCH_SCATTER_WITH_INPUT_SHAPE"
    source_input: list[str] = Field(min_length=1)
