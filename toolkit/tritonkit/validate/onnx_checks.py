"""A config against its ONNX graph, as the onnxruntime backend compares them when it loads the model.

Mirrors onnxruntime_backend r24.10 (src/onnxruntime.cc ValidateInputs, ValidateOutputs, the sequence-control
checks; src/onnxruntime_utils.cc CompareDimsSupported): the graph's inputs are counted against the config's
inputs, batch inputs and sequence controls and states; every config input and output must be a graph tensor of
the same data type and a shape that fits, where `max_batch_size > 0` makes the graph's first dimension the
batch (-1). Only the graph's declarations are read (onnx_graph.py): weights stay on disk, unread.
Triton stops at a model's first problem; this reports each tensor's, so one run shows them all.
"""
import difflib
from collections.abc import Sequence
from pathlib import Path

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding
from tritonkit.validate.onnx_graph import Graph, GraphTensor, NotOnnx, read_graph

_CONTROLS = pb.ModelSequenceBatching.Control
_REEXPORT = "or export the model again to match"


def check_onnx_model(name: str, c: pb.ModelConfig, path: Path, rel: str) -> list[Finding]:
    """Findings on config `c` of model `name` against the ONNX file `path` (`rel`: its path in the model folder)."""
    try:
        graph = read_graph(path)
    except (NotOnnx, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [Finding(name, "default_model_filename", f"{rel} is not an ONNX model the onnxruntime "
                        f"backend can load ({reason})",
                        "replace it with the exported .onnx file")]
    check = _Check(name, c, graph, rel)
    check.controls()
    check.inputs()
    check.outputs()
    return check.found


class _Check:
    """Collects the findings of one model against one graph."""

    def __init__(self, name: str, c: pb.ModelConfig, graph: Graph, rel: str) -> None:
        self.name, self.c, self.graph, self.rel = name, c, graph, rel
        self.found: list[Finding] = []

    def add(self, field: str, problem: str, fix: str) -> None:
        self.found.append(Finding(self.name, field, problem, fix))

    def controls(self) -> None:
        """Sequence controls are graph inputs of shape [1] (after the batch dimension) and the control's type."""
        for i, control_input in enumerate(self.c.sequence_batching.control_input):
            tensor = self.graph.inputs.get(control_input.name)
            where = f"sequence_batching.control_input[{i}]"
            if tensor is None:
                self.add(f"{where}.name", f"sequence control '{control_input.name}' is not an input of {self.rel} "
                         f"({_names('inputs', self.graph.inputs)})",
                         f"name a graph input, {_REEXPORT}")
                continue
            shape = tensor.shape[1:] if tensor.shape is not None and self.c.max_batch_size > 0 else tensor.shape
            if shape is not None and shape != (1,):
                self.add(f"{where}.name", f"sequence control '{control_input.name}' has shape {list(shape)} in "
                         f"{self.rel} (batch dimension left out); controls must be [1]",
                         "give the control input the shape [1] in the model (plus the batch dimension)")
            wanted = _control_type(control_input)
            if wanted and tensor.data_type != wanted:
                self.add(f"{where}.control", f"sequence control '{control_input.name}' is {wanted} in the config but "
                         f"{_typename(tensor)} in {self.rel}",
                         "use the control field of the graph's type (int32_false_true, fp32_false_true, "
                         "bool_false_true or data_type)")

    def inputs(self) -> None:
        c, graph = self.c, self.graph
        known = {**graph.inputs, **graph.overridable}
        for i, t in enumerate(c.input):
            where = f"input[{i}]"
            if t.optional and c.max_batch_size != 0:
                self.add(f"{where}.optional", f"optional input '{t.name}' is not supported by the onnxruntime backend "
                         f"for a model that batches (max_batch_size {c.max_batch_size})",
                         "remove optional, or set max_batch_size: 0")
                continue
            tensor = known.get(t.name)
            if tensor is None:
                self.add(f"{where}.name", f"'{t.name}' is not an input of {self.rel} ({_names('inputs', known)})",
                         self._rename(t.name, known, c.input))
                continue
            if self._type_differs(where, "input", t, tensor):
                continue
            if t.allow_ragged_batch:
                if tensor.shape is not None and tensor.shape != (-1,):
                    self.add(f"{where}.allow_ragged_batch", f"ragged input '{t.name}' must have shape [-1] in "
                             f"{self.rel}, which gives {list(tensor.shape)}",
                             "export the input flat with one dynamic dimension, or remove "
                             f"allow_ragged_batch, {_REEXPORT}")
                continue
            self._dims(where, "input", t, tensor, exact=False)
        self._count(known)

    def outputs(self) -> None:
        scattered = {n for b in self.c.batch_output for n in b.target_name}
        for i, t in enumerate(self.c.output):
            where = f"output[{i}]"
            tensor = self.graph.outputs.get(t.name)
            if tensor is None:
                self.add(f"{where}.name", f"'{t.name}' is not an output of {self.rel} "
                         f"({_names('outputs', self.graph.outputs)})",
                         self._rename(t.name, self.graph.outputs, self.c.output))
            elif not self._type_differs(where, "output", t, tensor) and t.name not in scattered:
                self._dims(where, "output", t, tensor, exact=True)

    def _count(self, known: dict[str, GraphTensor]) -> None:
        """The graph's required inputs are exactly the config's inputs, batch inputs, controls and states."""
        c = self.c
        controls = c.sequence_batching.control_input
        if any(t.name not in known for t in c.input) or any(ci.name not in self.graph.inputs for ci in controls):
            return  # the names are the problem, reported above
        declared = [t.name for t in c.input if not t.optional]
        declared += [n for b in c.batch_input for n in b.target_name[:1]]
        declared += [ci.name for ci in c.sequence_batching.control_input if ci.control]
        declared += [s.input_name for s in c.sequence_batching.state]
        required = list(self.graph.inputs)
        if len(declared) == len(required):
            return
        undeclared = [n for n in required if n not in declared]
        if undeclared:
            self.add("input", f"{self.rel} has {len(required)} inputs but the config declares {len(declared)}; it "
                     f"lacks {', '.join(repr(n) for n in undeclared)}",
                     "add them to input (or as batch_input / sequence control entries)")
        else:
            self.add("input", f"{self.rel} has {len(required)} inputs but the config declares {len(declared)} "
                     f"({', '.join(declared)})",
                     f"declare each graph input once: {', '.join(required)}")

    def _type_differs(self, where: str, kind: str, t: pb.ModelInput | pb.ModelOutput, tensor: GraphTensor) -> bool:
        config_type = pb.DataType.Name(t.data_type)
        if config_type == "TYPE_BF16":
            self.add(f"{where}.data_type", f"the onnxruntime backend does not serve TYPE_BF16 ({kind} '{t.name}')",
                     "use TYPE_FP16 or TYPE_FP32 in the model and config")
            return True
        if tensor.data_type == config_type:
            return False
        fix = (f"set data_type: {tensor.data_type}" if tensor.data_type
               else "cast the tensor inside the model to a type Triton serves")
        self.add(f"{where}.data_type", f"{kind} '{t.name}' is {config_type} but {self.rel} gives {_typename(tensor)}",
                 fix)
        return True

    def _dims(self, where: str, kind: str, t: pb.ModelInput | pb.ModelOutput, tensor: GraphTensor, exact: bool) -> None:
        """CompareDimsSupported: a fixed graph dimension must be repeated; an output's -1 too (`exact`)."""
        model = tensor.shape
        if model is None:
            return  # the graph declares no shape: nothing to compare
        reshaped = t.HasField("reshape")
        dims = list(t.reshape.shape) if reshaped else list(t.dims)
        field = f"{where}.reshape.shape" if reshaped else f"{where}.dims"
        said = f"{'reshape' if reshaped else 'dims'} {dims}"
        if not model:
            if any(d != 1 for d in dims):
                self.add(field, f"{kind} '{t.name}' is a scalar in {self.rel}, but the config gives {said}",
                         "write dims: [1]")
            return
        batching = self.c.max_batch_size > 0
        if batching and model[0] != -1:
            self.add("max_batch_size", f"is {self.c.max_batch_size}, so the first dimension of {kind} '{t.name}' is "
                     f"the batch, but {self.rel} fixes it: shape {list(model)}",
                     f"set max_batch_size: 0 and dims: {list(model)}, or export the model with a dynamic "
                     "first (batch) dimension")
            return
        full = [-1, *dims] if batching else dims
        if len(model) == len(full) and all(m == d for m, d in zip(model, full) if exact or m != -1):
            return
        expected = list(model[1:] if batching else model)
        shown = f"{said} (with the batch dimension: {full})" if batching else said
        self.add(field, f"{kind} '{t.name}' has {shown} but {self.rel} gives shape {list(model)}",
                 f"write {'reshape: {shape: ' + str(expected) + '}' if reshaped else f'dims: {expected}'}, {_REEXPORT}")

    @staticmethod
    def _rename(wanted: str,
                tensors: dict[str, GraphTensor], declared: Sequence[pb.ModelInput | pb.ModelOutput]) -> str:
        """Rename to the closest graph tensor the config does not declare yet, if any."""
        free = [n for n in tensors if n not in {t.name for t in declared}]
        close = difflib.get_close_matches(wanted, free, n=1, cutoff=0.0)
        return f"rename it to '{close[0]}' (the graph's name), {_REEXPORT}" if close else f"remove it, {_REEXPORT}"


def _control_type(control_input: pb.ModelSequenceBatching.ControlInput) -> str | None:
    """The data type the backend expects for a control input (GetBoolean/TypedSequenceControlProperties)."""
    for control in control_input.control:
        if control.kind == _CONTROLS.CONTROL_SEQUENCE_CORRID:
            return pb.DataType.Name(control.data_type)
        if control.kind in (_CONTROLS.CONTROL_SEQUENCE_START, _CONTROLS.CONTROL_SEQUENCE_END,
                            _CONTROLS.CONTROL_SEQUENCE_READY):
            return ("TYPE_INT32" if control.int32_false_true else "TYPE_FP32" if control.fp32_false_true
                    else "TYPE_BOOL" if control.bool_false_true else None)
    return None


def _names(kind: str, tensors: dict[str, GraphTensor]) -> str:
    return f"its {kind}: {', '.join(tensors) or 'none'}"


def _typename(tensor: GraphTensor) -> str:
    return tensor.data_type or "a type Triton does not serve"
