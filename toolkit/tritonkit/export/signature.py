"""The inputs/outputs of an ONNX graph as Triton config entries, and their reconciliation with the spec.

The graph is the truth the backend will enforce at load time; the spec may narrow it (fixed sizes where
the graph is dynamic, a `reshape`) but a contradiction is reported here, before Triton sees it.
"""
import difflib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tritonkit.errors import NOWHERE, Where
from tritonkit.export.errors import SignatureError
from tritonkit.triton.datatypes import ONNX_TO_TRITON


@dataclass
class TensorSig:
    """One config entry: name, Triton data type, dims without the batch axis (-1 = variable)."""

    name: str
    data_type: str
    dims: list[int]


@dataclass
class Signature:
    """The graph's inputs and outputs as Triton sees them."""

    inputs: list[TensorSig] = field(default_factory=list)
    outputs: list[TensorSig] = field(default_factory=list)

    def as_dict(self) -> dict[str, list[dict[str, Any]]]:
        """Plain lists of {name, data_type, dims} dicts, ready for the config renderer."""
        return {"inputs": [asdict(t) for t in self.inputs], "outputs": [asdict(t) for t in self.outputs]}


def graph_shapes(onnx_path: Path) -> dict[str, tuple[str, list[int | str]]]:
    """name -> (ONNX element type name, full shape with dim_param strings) for graph inputs and outputs."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    shapes: dict[str, tuple[str, list[int | str]]] = {}
    # initializers listed as inputs are weights (old exporters do that); an output may be one (a constant the model
    # returns, e.g. a vocoder's sample rate) and is still an output
    for value in [*(i for i in graph.input if i.name not in initializers), *graph.output]:
        tensor_type = value.type.tensor_type
        dims: list[int | str] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?")
                                 for d in tensor_type.shape.dim]
        shapes[value.name] = (onnx.TensorProto.DataType.Name(tensor_type.elem_type), dims)
    return shapes


def read_signature(onnx_path: Path, max_batch_size: int, where: Where = NOWHERE) -> Signature:
    """Triton inputs/outputs of an ONNX file; the batch axis is dropped when max_batch_size > 0."""
    import onnx

    model = onnx.load(str(onnx_path), load_external_data=False)
    shapes = graph_shapes(onnx_path)
    initializers = {i.name for i in model.graph.initializer}
    sig = Signature()
    for kind, values, target in (("input", model.graph.input, sig.inputs), ("output", model.graph.output, sig.outputs)):
        for value in values:
            if kind == "input" and value.name in initializers:
                continue
            elem, dims = shapes[value.name]
            if elem not in ONNX_TO_TRITON:
                raise SignatureError.at(where, f"graph {kind} '{value.name}' has element type {elem}, "
                                        "which Triton cannot serve", "cast it to a supported type inside the model")
            triton_dims = [d if isinstance(d, int) and d > 0 else -1 for d in dims]
            if max_batch_size > 0:
                at = where.at("max_batch_size")
                if not dims:
                    raise SignatureError.at(at, f"graph {kind} '{value.name}' is a scalar, so it has no batch axis",
                                            "set max_batch_size: 0")
                if triton_dims[0] != -1:
                    raise SignatureError.at(
                        at, f"graph {kind} '{value.name}' has a fixed first dim {dims[0]}, but max_batch_size "
                        f"{max_batch_size} makes it the batch axis",
                        "export with a dynamic batch axis or set max_batch_size: 0")
                triton_dims = triton_dims[1:]
            target.append(TensorSig(value.name, ONNX_TO_TRITON[elem], triton_dims))
    return sig


def _get(entry: Any, key: str) -> Any:
    """Reads a key from a dict or an attribute from a pydantic model (the spec's TensorInput/TensorOutput)."""
    return entry.get(key) if isinstance(entry, dict) else getattr(entry, key, None)


def _check_dims(graph: TensorSig, declared: list[int], where: Where, what: str) -> None:
    """Same rank; each fixed graph dim repeated; a dynamic graph dim may be narrowed to a size."""
    if len(declared) != len(graph.dims):
        raise SignatureError.at(where, f"{what} {declared} has rank {len(declared)} but the graph's '{graph.name}' "
                                f"is {graph.dims} (rank {len(graph.dims)}, batch axis excluded)",
                                f"write dims: {graph.dims}")
    for axis, (want, have) in enumerate(zip(graph.dims, declared)):
        if want != -1 and have != want:
            raise SignatureError.at(where, f"{what}[{axis}] is {have} but the graph fixes it to {want}",
                                    f"write dims: {graph.dims}")


def _reconcile_one(graph: list[TensorSig], declared: list[Any] | None, kind: str, model: Where) -> list[TensorSig]:
    """Spec entries checked against the graph; graph entries the spec leaves out are filled in."""
    by_name = {t.name: t for t in graph}
    chosen: dict[str, TensorSig] = {}
    for index, entry in enumerate(declared or []):
        where = model.at(f"{kind}[{index}]")
        name = _get(entry, "name")
        if name not in by_name:
            close = difflib.get_close_matches(str(name), list(by_name), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"the graph's {kind}s are: {', '.join(by_name)}"
            raise SignatureError.at(where.at("name"), f"{kind} '{name}' is not in the exported graph", hint)
        want = by_name[name]
        data_type = _get(entry, "data_type")
        if data_type and data_type != want.data_type:
            raise SignatureError.at(where.at("data_type"), f"{data_type} but the graph's '{name}' is {want.data_type}",
                                    f"write data_type: {want.data_type} (or cast inside the model)")
        dims = _get(entry, "dims")
        reshape = _get(entry, "reshape")
        shape = _get(reshape, "shape") if reshape is not None else None
        if shape is not None:
            _check_dims(want, list(shape), where.at("reshape.shape"), "reshape.shape")
        elif dims is not None:
            _check_dims(want, list(dims), where.at("dims"), "dims")
        chosen[name] = TensorSig(name, want.data_type, list(dims) if dims is not None else want.dims)
    return [chosen.get(t.name, t) for t in graph]


def check_output_sizes(sig: Signature, seen: dict[str, list[list[int]]], max_batch_size: int, outputs: list[Any] | None,
                       where: Where) -> None:
    """A fixed output dim of the config must be the size verification saw in every case.

    The graph leaves a size dynamic when it depends on the inputs' lengths or values (a length regulator's frame
    count is the sum of predicted durations); fixing it in the spec would make Triton refuse most responses.
    """
    skip = 1 if max_batch_size > 0 else 0
    index_of = {_get(entry, "name"): i for i, entry in enumerate(outputs or [])}
    for tensor in sig.outputs:
        shapes = [shape[skip:] for shape in seen.get(tensor.name, [])]
        for axis, dim in enumerate(tensor.dims):
            sizes = sorted({shape[axis] for shape in shapes if len(shape) == len(tensor.dims)})
            if dim == -1 or not sizes or sizes == [dim]:
                continue
            at = where.at(f"output[{index_of[tensor.name]}].dims") if tensor.name in index_of else where
            raise SignatureError.at(at, f"output '{tensor.name}' dims[{axis}] is {dim} but verification saw sizes "
                                    f"{', '.join(map(str, sizes[:8]))} there "
                                    "(it depends on the inputs' lengths or values)",
                                    f"write -1 at dims[{axis}]")


def reconcile(graph: Signature, inputs: list[Any] | None = None, outputs: list[Any] | None = None,
              where: Where = NOWHERE) -> Signature:
    """The config signature: the spec's `input`/`output` entries where given, checked against the graph.

    Entries may be dicts or the spec's pydantic tensors (name, data_type, dims, reshape). An unknown
    name, a different data type, a different rank or a different fixed dim raises `SignatureError`.
    """
    return Signature(_reconcile_one(graph.inputs, inputs, "input", where),
                     _reconcile_one(graph.outputs, outputs, "output", where))
