"""Turns a Triton `ModelConfig` message into the fields of a `tritonkit.yaml` model, driven by the descriptor.

Every field set in the message is looked up by name (or alias, e.g. `global`) in the spec's pydantic model
and converted by its protobuf type, so a field the spec has no place for becomes a problem naming the model
and field instead of being dropped. The spec's own conventions are the only special cases: the model name is
the spec's key, `parameters` are plain strings, and data files (warmup inputs, initial states, label files)
are paths that the caller copies next to the new spec.
"""
import types
import typing
from collections.abc import Callable
from typing import Any

import numpy as np
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from pydantic import BaseModel

from tritonkit.errors import Problem, Where

#: (message type, field) -> the model sub-folder Triton reads that data file from ("": the model folder itself).
DATA_FILE_FIELDS = {
    ("inference.ModelWarmup.Input", "input_data_file"): "warmup",
    ("inference.ModelSequenceBatching.InitialState", "data_file"): "initial_state",
    ("inference.ModelOutput", "label_filename"): "",
}
#: Messages the spec writes as one scalar: `parameters: {key: "value"}`.
_SCALAR_MESSAGES = {"inference.ModelParameter": "string_value"}

#: Gets (sub-folder, file name as the config writes it) and returns the path to put in the spec.
DataFileRef = Callable[[str, str], str]


def message_to_spec(message: Message, spec_cls: type[BaseModel], where: Where, data_file: DataFileRef,
                    skip: frozenset[str] = frozenset()) -> tuple[dict[str, Any], list[Problem]]:
    """The spec mapping for `message` (fields of `spec_cls`), and a problem per field the spec cannot hold."""
    converter = _Converter(data_file)
    return converter.message(message, spec_cls, where, skip), converter.problems


class _Converter:
    """Walks one message; collects problems instead of stopping at the first."""

    def __init__(self, data_file: DataFileRef) -> None:
        self.data_file = data_file
        self.problems: list[Problem] = []

    def message(self, message: Message, spec_cls: type[BaseModel], path: Where,
                skip: frozenset[str] = frozenset()) -> dict[str, Any]:
        fields = {(info.alias or name): name for name, info in spec_cls.model_fields.items()}
        out: dict[str, Any] = {}
        for fd, value in message.ListFields():
            if fd.name in skip:
                continue
            where = path.at(fd.name)
            if fd.name not in fields:
                self.problems.append(Problem.at(where, "tritonkit.yaml has no field for this setting",
                                                "remove it from config.pbtxt to import this model, "
                                                "or keep serving it from a hand-written repository"))
                continue
            sub = _model_class(spec_cls.model_fields[fields[fd.name]].annotation)
            out[fd.name] = self.field(fd, value, sub, where)
        out.update(_unset_differing_defaults(message, spec_cls, out, skip))
        return {key: out[key] for key in fields if key in out}  # the spec's field order, as users write it

    def field(self, fd: FieldDescriptor, value: Any, sub: type[BaseModel] | None, where: Where) -> Any:
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            return {key: self.single(value_fd, item, sub, where.at(str(key))) for key, item in value.items()}
        if fd.label == FieldDescriptor.LABEL_REPEATED:
            return [self.single(fd, v, sub, Where(where.file, f"{where.field}[{i}]")) for i, v in enumerate(value)]
        return self.single(fd, value, sub, where)

    def single(self, fd: FieldDescriptor, value: Any, sub: type[BaseModel] | None, where: Where) -> Any:
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            scalar = _SCALAR_MESSAGES.get(fd.message_type.full_name)
            if scalar is not None:
                return getattr(value, scalar)
            if sub is None:
                raise TypeError(f"{where.field}: the spec has no model for {fd.message_type.full_name}")
            return self.message(value, sub, where)
        if fd.type == FieldDescriptor.TYPE_ENUM:
            return fd.enum_type.values_by_number[value].name
        if fd.type == FieldDescriptor.TYPE_FLOAT:
            return float(str(np.float32(value)))  # 0.7, not 0.699999988079071: the same float32 either way
        folder = DATA_FILE_FIELDS.get((fd.containing_type.full_name, fd.name))
        if folder is not None:
            return self.data_file(folder, value)
        return value


def _unset_differing_defaults(message: Message, spec_cls: type[BaseModel], out: dict[str, Any],
                              skip: frozenset[str]) -> dict[str, Any]:
    """Unset scalars whose spec default differs from protobuf's zero (e.g. `model_version: -1`), written as the zero.

    Required spec fields that are unset (e.g. empty `dims`) are written too; message fields stay absent.
    """
    extra: dict[str, Any] = {}
    by_name = message.DESCRIPTOR.fields_by_name
    for name, info in spec_cls.model_fields.items():
        key = info.alias or name
        fd = by_name.get(key)
        if fd is None or key in out or key in skip or fd.containing_oneof is not None:
            continue
        if fd.label == FieldDescriptor.LABEL_REPEATED:
            if info.is_required():
                extra[key] = {} if fd.message_type is not None and fd.message_type.GetOptions().map_entry else []
            continue
        if fd.type == FieldDescriptor.TYPE_MESSAGE:
            continue
        zero = fd.enum_type.values_by_number[0].name if fd.type == FieldDescriptor.TYPE_ENUM else fd.default_value
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        if info.is_required() or (default is not None and default != zero):
            extra[key] = zero
    return extra


def _model_class(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation such as `list[TensorInput]`, `X | None` or `dict[int, X]`."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _model_class(arg)
            if found is not None:
                return found
    return None
