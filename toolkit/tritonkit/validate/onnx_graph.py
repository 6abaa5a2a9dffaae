"""An ONNX file's graph inputs and outputs, read straight from the protobuf wire format.

`validate` must compare configs with graphs on a base install (the onnx package comes with the `export`
extra) and stay light (`tritonkit validate` imports neither onnx nor numpy). Only the fields the onnxruntime
backend compares are decoded; initializers' weights are skipped over, never copied, and the file is mapped
rather than read, so a 2 GB model costs little more than a small one. External data is never opened.
Field numbers are onnx.proto's (IR version 3 onwards; they have never changed).
"""
import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tritonkit.triton.datatypes import TRITON_OF_ONNX

_MODEL_GRAPH = 7
_GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT, _GRAPH_SPARSE_INITIALIZER = 5, 11, 12, 15
_TENSOR_NAME, _SPARSE_VALUES = 8, 1
_VALUE_NAME, _VALUE_TYPE = 1, 2
_TYPE_TENSOR, _TENSOR_ELEM, _TENSOR_SHAPE, _SHAPE_DIM, _DIM_VALUE = 1, 1, 2, 1, 1


@dataclass(frozen=True)
class GraphTensor:
    """A graph input or output as the backend reads it: Triton data type (None: not one it serves) and shape
    (-1 for a symbolic or unset dimension; None when the graph gives no shape)."""

    data_type: str | None
    shape: tuple[int, ...] | None


@dataclass(frozen=True)
class Graph:
    """The tensors the onnxruntime backend sees in a model file."""

    inputs: dict[str, GraphTensor]  # required inputs, in graph order
    overridable: dict[str, GraphTensor]  # initializers listed as inputs: a request may send them
    outputs: dict[str, GraphTensor]


class NotOnnx(ValueError):
    """The file is no ONNX model (or a truncated one)."""


def read_graph(path: Path) -> Graph:
    """The graph's inputs and outputs; raises NotOnnx (or OSError) for a file that holds no ONNX graph."""
    if path.stat().st_size == 0:
        raise NotOnnx("the file is empty")
    problem = None
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        view = memoryview(data)
        try:
            graph = _model_graph(view)
        except NotOnnx as exc:
            # re-raised below: the traceback's frames hold slices of the mapping, which must go before it closes
            problem = str(exc)
        finally:
            view.release()
    if problem is not None:
        raise NotOnnx(problem)
    return graph


def _model_graph(model: memoryview) -> Graph:
    graph = _message(model, _MODEL_GRAPH)
    if graph is None:
        raise NotOnnx("it holds no graph")
    return _graph(graph)


def _graph(data: memoryview) -> Graph:
    weights: set[str] = set()
    inputs: dict[str, GraphTensor] = {}
    outputs: dict[str, GraphTensor] = {}
    for number, value in _fields(data):
        if not isinstance(value, memoryview):
            continue
        if number == _GRAPH_INITIALIZER:
            weights.add(_string(value, _TENSOR_NAME))
        elif number == _GRAPH_SPARSE_INITIALIZER:
            values = _message(value, _SPARSE_VALUES)
            weights.add(_string(values, _TENSOR_NAME) if values is not None else "")
        elif number in (_GRAPH_INPUT, _GRAPH_OUTPUT):
            (inputs if number == _GRAPH_INPUT else outputs)[_string(value, _VALUE_NAME)] = _tensor(value)
    return Graph({n: t for n, t in inputs.items() if n not in weights},
                 {n: t for n, t in inputs.items() if n in weights}, outputs)


def _tensor(value_info: memoryview) -> GraphTensor:
    kind = _message(value_info, _VALUE_TYPE)
    tensor = _message(kind, _TYPE_TENSOR) if kind is not None else None
    if tensor is None:  # a sequence, map or optional value: nothing Triton serves
        return GraphTensor(None, None)
    elem = next((v for n, v in _fields(tensor) if n == _TENSOR_ELEM and isinstance(v, int)), 0)
    shape = _message(tensor, _TENSOR_SHAPE)
    if shape is None:
        return GraphTensor(TRITON_OF_ONNX.get(elem), None)
    dims = []
    for number, dim in _fields(shape):
        if number == _SHAPE_DIM and isinstance(dim, memoryview):
            sizes = [v for n, v in _fields(dim) if n == _DIM_VALUE and isinstance(v, int)]
            dims.append(_signed(sizes[-1]) if sizes else -1)
    return GraphTensor(TRITON_OF_ONNX.get(elem), tuple(dims))


def _message(data: memoryview, wanted: int) -> memoryview | None:
    """The last occurrence of sub-message field `wanted` (protobuf's rule for a repeated singular field)."""
    found = None
    for number, value in _fields(data):
        if number == wanted and isinstance(value, memoryview):
            found = value
    return found


def _string(data: memoryview, wanted: int) -> str:
    value = _message(data, wanted)
    return bytes(value).decode("utf-8", errors="replace") if value is not None else ""


def _fields(data: memoryview) -> Iterator[tuple[int, int | memoryview]]:
    """(field number, varint value or the bytes of a length-delimited field) of one message; fixed-width
    fields are skipped. Raises NotOnnx on bytes that are no protobuf message."""
    at, end = 0, len(data)
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise NotOnnx("it is not a protobuf message")
        if wire == 0:
            value, at = _varint(data, at)
            yield number, value
        elif wire == 2:
            size, at = _varint(data, at)
            if at + size > end:
                raise NotOnnx("it is truncated")
            yield number, data[at:at + size]
            at += size
        elif wire in (1, 5):
            at += 8 if wire == 1 else 4
        else:
            raise NotOnnx(f"it is not a protobuf message (wire type {wire})")
    if at != end:
        raise NotOnnx("it is truncated")


def _varint(data: memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise NotOnnx("it is truncated")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _signed(value: int) -> int:
    """An int64 written as a varint (negative numbers take ten bytes)."""
    return value - (1 << 64) if value >= 1 << 63 else value
