"""Backend optimization settings: execution accelerators (ONNX Runtime / TensorRT), CUDA graphs, pinned memory."""
from typing import Literal

from pydantic import Field

from tritonkit.spec.base import StrictModel


class Accelerator(StrictModel):
    """An execution accelerator such as `tensorrt` or `openvino`, with its string parameters."""

    name: str = Field(min_length=1)
    parameters: dict[str, str | int | float | bool] = Field(default_factory=dict)


class ExecutionAccelerators(StrictModel):
    """Accelerators for GPU and CPU instances."""

    gpu_execution_accelerator: list[Accelerator] = Field(default_factory=list)
    cpu_execution_accelerator: list[Accelerator] = Field(default_factory=list)


class Cuda(StrictModel):
    """CUDA-specific settings of the TensorRT and PyTorch backends."""

    graphs: bool = False
    busy_wait_events: bool = False
    output_copy_stream: bool = False


class PinnedMemory(StrictModel):
    """Whether input/output copies use pinned memory."""

    enable: bool = True


class Optimization(StrictModel):
    """Triton's ModelOptimizationPolicy."""

    priority: Literal["PRIORITY_DEFAULT", "PRIORITY_MAX", "PRIORITY_MIN"] | None = None
    cuda: Cuda | None = None
    execution_accelerators: ExecutionAccelerators | None = None
    input_pinned_memory: PinnedMemory | None = None
    output_pinned_memory: PinnedMemory | None = None
    gather_kernel_buffer_threshold: int | None = Field(default=None, ge=0)
    eager_batching: bool | None = None
