"""Triton's tensor data types and the names ONNX and numpy give them."""
from __future__ import annotations

from typing import TYPE_CHECKING

from tritonkit.triton.model_config import pb

if TYPE_CHECKING:  # annotations only: the spec and validate read the tables without loading numpy
    import numpy as np

#: ModelConfig's DataType names in enum order, TYPE_INVALID left out.
TRITON_TYPES = tuple(pb.DataType.keys())[1:]
#: ONNX TensorProto element types (number, name) -> Triton data types; complex and float8 types have none.
_ONNX = ((1, "FLOAT", "TYPE_FP32"), (2, "UINT8", "TYPE_UINT8"), (3, "INT8", "TYPE_INT8"), (4, "UINT16", "TYPE_UINT16"),
         (5, "INT16", "TYPE_INT16"), (6, "INT32", "TYPE_INT32"), (7, "INT64", "TYPE_INT64"),
         (8, "STRING", "TYPE_STRING"), (9, "BOOL", "TYPE_BOOL"), (10, "FLOAT16", "TYPE_FP16"),
         (11, "DOUBLE", "TYPE_FP64"), (12, "UINT32", "TYPE_UINT32"), (13, "UINT64", "TYPE_UINT64"),
         (16, "BFLOAT16", "TYPE_BF16"))
#: By element type name, as the onnx package gives them (export).
ONNX_TO_TRITON = {name: triton for _, name, triton in _ONNX}
#: By number, as the wire format has them (validate); BFLOAT16 is left out: the onnxruntime backend serves no BF16.
TRITON_OF_ONNX = {number: triton for number, _, triton in _ONNX if triton != "TYPE_BF16"}


def numpy_dtype(data_type: int) -> np.dtype:
    """numpy dtype for a ModelConfig data type (object for strings: the config's STRING is the protocol's BYTES)."""
    import numpy as np
    from tritonclient.utils import triton_to_np_dtype
    name = pb.DataType.Name(data_type)[len("TYPE_"):]
    return np.dtype(triton_to_np_dtype("BYTES" if name == "STRING" else name))
