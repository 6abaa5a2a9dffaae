"""A config against its TorchScript model, as the pytorch backend (pytorch_libtorch) checks them at load.

Mirrors pytorch_backend r24.10 (src/libtorch.cc ValidateInputs, ValidateOutputs, GetNamingConvention, the
sequence-control checks): the config needs an input and an output; data types must be ones libtorch serves;
a TYPE_STRING tensor is a flat list; sequence controls and states are named `<name>__<index>`. Inputs are
passed to `forward` by argument name when every config input names one, by index when every name is
`<name>__<index>`, else in config order (Triton logs a warning and loads: a warning here too). The forward
arguments are read with torch when it is installed; without it, the checks that need them are skipped.
"""
from pathlib import Path

from tritonkit.triton.model_config import pb
from tritonkit.validate.findings import Finding

#: Triton data types libtorch serves (ModelConfigDataTypeToTorchType), TYPE_STRING as a list of strings.
TORCH_TYPES = frozenset({"TYPE_BOOL", "TYPE_UINT8", "TYPE_INT8", "TYPE_INT16", "TYPE_INT32", "TYPE_INT64",
                         "TYPE_FP16", "TYPE_FP32", "TYPE_FP64", "TYPE_STRING"})
_CONTROLS = pb.ModelSequenceBatching.Control
_NAMING_FIX = "name it <name>__<index>, e.g. INPUT__0"


def check_torchscript_model(name: str, c: pb.ModelConfig, path: Path, rel: str) -> list[Finding]:
    """Findings on config `c` of model `name` against the TorchScript file `path` (`rel`: its path in the folder)."""
    found = _config_rules(name, c)
    arguments = forward_arguments(path)
    if isinstance(arguments, str):
        return [*found, Finding(name, "default_model_filename", f"{rel} is not a TorchScript model the pytorch backend "
                                f"can load ({arguments})",
                                "replace it with a file written by torch.jit.save")]
    if arguments is not None and c.input:
        found += _forward_rules(name, c, arguments, rel)
    return found


def forward_arguments(path: Path) -> list[tuple[str, str]] | str | None:
    """(name, type kind) of `forward`'s arguments after `self`; the error text when torch cannot load the file;
    None without torch."""
    try:
        import torch
    except ImportError:
        return None
    try:
        module = torch.jit.load(str(path), map_location="cpu")
        arguments = [(a.name, a.type.kind()) for a in module.forward.schema.arguments]
    except Exception as exc:  # torch raises RuntimeError, ValueError, ... on a file that is no TorchScript archive
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return arguments[1:] if arguments and arguments[0][1] == "ClassType" else arguments


def is_indexed(tensor_name: str) -> bool:
    """Whether the backend reads `tensor_name` as `<name>__<index>`."""
    at = tensor_name.find("__")  # the first "__", then only ASCII digits (none at all passes too)
    return at >= 0 and all(ch in "0123456789" for ch in tensor_name[at + 2:])


def _config_rules(name: str, c: pb.ModelConfig) -> list[Finding]:
    found = []
    for kind, tensors in (("input", c.input), ("output", c.output)):
        if not tensors:
            found.append(Finding(name, kind, f"the pytorch backend needs at least one {kind}",
                                 f"declare the model's {kind}s"))
        for i, t in enumerate(tensors):
            found += _tensor_rules(name, f"{kind}[{i}]", kind, t, c.max_batch_size)
    for i, control_input in enumerate(c.sequence_batching.control_input):
        if control_input.control and not is_indexed(control_input.name):
            found.append(Finding(name, f"sequence_batching.control_input[{i}].name",
                                 f"the pytorch backend passes sequence control '{control_input.name}' by index, so it "
                                 "must be named <name>__<index>", _NAMING_FIX))
        for control in control_input.control:
            type_name = pb.DataType.Name(control.data_type)
            if control.kind == _CONTROLS.CONTROL_SEQUENCE_CORRID and type_name not in TORCH_TYPES - {"TYPE_STRING"}:
                found.append(Finding(name, f"sequence_batching.control_input[{i}].control", "correlation id type "
                                     f"{type_name} is not supported by PyTorch", "use TYPE_INT64 (or TYPE_INT32)"))
    if not all(is_indexed(t.name) for t in c.output):
        if c.sequence_batching.state:
            found.append(Finding(name, "output", "the pytorch backend needs every output named <name>__<index> when "
                                 "the model keeps sequence state", "name them OUTPUT__0, OUTPUT__1, ..."))
        else:
            found.append(Finding(name, "output", f"output names {[t.name for t in c.output]} are not all "
                                 "<name>__<index>, so the pytorch backend maps them to forward()'s "
                                 "results in config order",
                                 "name them OUTPUT__0, OUTPUT__1, ... (the index of each result)", "warning"))
    for i, state in enumerate(c.sequence_batching.state):
        for field in ("input_name", "output_name"):
            if not is_indexed(getattr(state, field)):
                found.append(Finding(name, f"sequence_batching.state[{i}].{field}", "the pytorch backend needs state "
                                     f"'{getattr(state, field)}' named <name>__<index>", _NAMING_FIX))
    return found


def _tensor_rules(name: str, where: str, kind: str, t: pb.ModelInput | pb.ModelOutput,
                  max_batch_size: int) -> list[Finding]:
    type_name = pb.DataType.Name(t.data_type)
    if type_name not in TORCH_TYPES:
        return [Finding(name, f"{where}.data_type", f"{type_name} ({kind} '{t.name}') is not a type the "
                        "pytorch backend serves",
                        f"use one of {', '.join(sorted(TORCH_TYPES))}")]
    dims = list(t.reshape.shape) if t.HasField("reshape") else list(t.dims)
    if type_name == "TYPE_STRING" and len(dims) + (max_batch_size > 0) > 1:
        batch = " plus the batch dimension" if max_batch_size > 0 else ""
        return [Finding(name, f"{where}.dims", f"the pytorch backend passes TYPE_STRING {kind} '{t.name}' as a flat "
                        f"list, but dims {dims}{batch} have more than one dimension",
                        "set max_batch_size: 0 and dims: [-1]" if max_batch_size > 0 else "write dims: [-1]")]
    return []


def _forward_rules(name: str, c: pb.ModelConfig, arguments: list[tuple[str, str]], rel: str) -> list[Finding]:
    """How forward's arguments meet the config's inputs (count, then naming)."""
    names = [n for n, _ in arguments]
    if len(arguments) == 1 and arguments[0][1] == "DictType":
        return []  # one Dict[str, Tensor] argument: the config's input names are its keys
    odd = [n for n, kind in arguments if kind not in ("TensorType", "ListType")]
    if odd:
        return [Finding(name, "input", f"forward() of {rel} takes '{odd[0]}', which is neither a Tensor nor a List; "
                        "the pytorch backend passes only those (or one Dict[str, Tensor])",
                        "make forward take tensors")]
    s = c.sequence_batching
    expected = len(c.input) + len(c.batch_input) + sum(1 for ci in s.control_input if ci.control) + len(s.state)
    if expected != len(arguments):
        return [Finding(name, "input", f"forward() of {rel} takes {len(arguments)} inputs "
                        f"({', '.join(names) or 'none'}) but the config declares {expected}",
                        "declare one input per forward argument (inputs, batch inputs, sequence "
                        "controls and states together)")]
    found = []
    by_argument = all(t.name in names for t in c.input)
    by_index = not by_argument and all(is_indexed(t.name) for t in c.input)
    if c.sequence_batching.state and not by_index:
        found.append(Finding(name, "input", "the pytorch backend needs every input named <name>__<index> (and no "
                             "input named after a forward() argument) when the model keeps sequence state",
                             "name them INPUT__0, INPUT__1, ..."))
    elif not by_argument and not by_index:
        found.append(Finding(name, "input", f"input names {[t.name for t in c.input]} are neither forward()'s "
                             f"arguments ({', '.join(names)}) nor <name>__<index>, so the pytorch backend "
                             "passes them in config order",
                             f"name them {', '.join(names)} or INPUT__0, INPUT__1, ...", "warning"))
    return found
