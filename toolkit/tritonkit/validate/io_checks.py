"""Inputs and outputs of one model as Triton 2.51 checks them (ValidateModelInput/Output, ValidateIOShape).

Triton stops at a tensor's first problem, so each tensor gets at most one finding, in Triton's order.
"""
import math
from collections import Counter
from collections.abc import Sequence

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

_TRT = "tensorrt_plan"
_DIM_FIX = "use sizes >= 1, or -1 for a variable size"


def check_io(name: str, c: pb.ModelConfig, platform: str | None) -> list[Finding]:
    """Findings on `input`/`output` of `c`; `platform` is Triton's filled-in one (None: the model file decides)."""
    found: list[Finding] = []
    for kind, tensors in (("input", c.input), ("output", c.output)):
        for tname, count in Counter(t.name for t in tensors).items():
            if count > 1:
                found.append(Finding(name, kind, f"{kind} '{tname}' is declared {count} times; Triton keeps the first "
                                     "and ignores the others", "give each tensor a unique name", "warning"))
        for i, t in enumerate(tensors):
            problem = _shape_problem(t, c.max_batch_size) or _format_problem(kind, t, platform)
            if problem:
                found.append(Finding(name, f"{kind}[{i}]{problem[0]}", *problem[1:]))
    return found


def has_bad_dim(dims: Sequence[int]) -> bool:
    """A dimension Triton refuses: 0 or below -1 (-1 is a variable size). Shared with the smoke-case shape
    check, which leaves such dims to this module's line naming them."""
    return any(d < 1 and d != -1 for d in dims)


def _shape_problem(t: pb.ModelInput | pb.ModelOutput, max_batch_size: int) -> tuple[str, str, str] | None:
    """(field suffix, problem, fix) of ValidateIOShape's first failing rule, or None."""
    if not t.name:
        return ".name", "is empty", "name the tensor"
    if t.data_type == pb.TYPE_INVALID:
        return ".data_type", f"'{t.name}' has no data_type", "set data_type, e.g. TYPE_FP32"
    if not t.dims:
        return (".dims", f"'{t.name}' has no dims", "list its shape without the batch dimension (e.g. [1] "
                "for one value per item)")
    has_reshape = t.HasField("reshape")
    if has_reshape and not t.reshape.shape and max_batch_size == 0:
        return (".reshape", f"'{t.name}' has an empty reshape but the model does not batch, so the "
                "tensor would hold no data", "remove the reshape or give it a shape")
    if has_bad_dim(t.dims):
        return ".dims", f"dims {list(t.dims)} of '{t.name}' has a dimension that is 0 or below -1", _DIM_FIX
    if not has_reshape:
        return None
    shape = list(t.reshape.shape)
    if has_bad_dim(shape):
        return ".reshape", f"reshape {shape} of '{t.name}' has a dimension that is 0 or below -1", _DIM_FIX
    return _reshape_problem(t.name, list(t.dims), shape)


def _reshape_problem(tname: str, dims: list[int], shape: list[int]) -> tuple[str, str, str] | None:
    """Equal element counts, or -1s splitting dims and reshape into runs of equal counts ([2,4,-1,6] ~ [8,-1,1,6])."""
    dims_count, shape_count = _element_count(dims), _element_count(shape)
    if dims_count != shape_count and not (shape_count == 0 and dims_count == 1):
        what = ("an empty reshape needs dims of one element" if not shape
                else "only one of them has a variable (-1) dimension" if -1 in (dims_count, shape_count)
                else "dims and reshape hold different numbers of elements")
        return (".reshape", f"reshape {shape} does not fit dims {list(dims)} of '{tname}': {what}",
                "make the element counts equal, with -1 in both at matching places")
    if dims_count == -1:
        dim_runs, shape_runs = _runs(dims), _runs(shape)
        if len(dim_runs) != len(shape_runs):
            return (".reshape", f"reshape {shape} and dims {dims} of '{tname}' have different numbers of -1 "
                    "(variable-size) dimensions", "use one -1 in reshape for each -1 in dims")
        if dim_runs != shape_runs:
            return (".reshape", f"reshape {shape} does not fit dims {dims} of '{tname}': the fixed dimensions between "
                    f"-1s hold {shape_runs} elements, not {dim_runs}",
                    "make each run of fixed dimensions between -1s hold the same number of elements")
    return None


def _element_count(dims: Sequence[int]) -> int:
    """Triton's GetElementCount: -1 when any dim is variable, 0 for no dims, else the product."""
    return -1 if -1 in dims else math.prod(dims) if dims else 0


def dims_match(a: Sequence[int], b: Sequence[int]) -> bool:
    """Triton's CompareDimsWithWildcard: same rank, and each dim equal or -1 on either side."""
    return len(a) == len(b) and all(x == y or -1 in (x, y) for x, y in zip(a, b))


def _runs(dims: list[int]) -> list[int]:
    """Element counts of the fixed dimensions before, between and after the -1s."""
    runs, current = [], 1
    for d in dims:
        if d == -1:
            runs.append(current)
            current = 1
        else:
            current *= d
    return [*runs, current]


def _format_problem(kind: str, t: pb.ModelInput | pb.ModelOutput, platform: str | None) -> tuple[str, str, str] | None:
    """Layout formats, shape tensors and non-linear IO, which Triton ties to 3 dims or to TensorRT."""
    if isinstance(t, pb.ModelInput) and t.format in (pb.ModelInput.FORMAT_NHWC,
                                                     pb.ModelInput.FORMAT_NCHW) and len(t.dims) != 3:
        return (".format", f"{pb.ModelInput.Format.Name(t.format)} needs 3 dims but '{t.name}' has {list(t.dims)}",
                "give 3 dims (without the batch dimension) or remove format")
    if t.is_shape_tensor and platform not in (None, _TRT):
        return (".is_shape_tensor", "shape tensors are only supported by TensorRT models (platform tensorrt_plan)",
                "remove is_shape_tensor")
    if t.is_non_linear_format_io:
        if platform not in (None, _TRT):
            return (".is_non_linear_format_io", "non-linear IO format is only supported by TensorRT models "
                    "(platform tensorrt_plan)", "remove is_non_linear_format_io")
        if len(t.dims) != 3:
            return (".is_non_linear_format_io", f"non-linear IO format {kind} '{t.name}' needs 3 "
                    f"dims, has {list(t.dims)}", "give 3 dims or remove is_non_linear_format_io")
    return None
