"""Parses config text into Triton's ModelConfig protobuf and checks it survives a round trip."""
from __future__ import annotations

import difflib
import re

from google.protobuf import descriptor_pool, text_format
from tritonclient.grpc.model_config_pb2 import ModelConfig

from tritonkit.errors import TritonkitError

_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"?|\'(?:[^\'\\\n]|\\.)*\'?|[A-Za-z_][\w.]*|[-+]?[\w.]+|.')
_NO_FIELD = re.compile(r'Message type "([\w.]+)" has no field named "(\w+)"')


def parse_model_config(text: str, shown: str, field_prefix: str = "") -> ModelConfig:
    """The parsed message; a parse error becomes a one-line problem naming the field and line."""
    try:
        config = text_format.Parse(text, ModelConfig())
    except text_format.ParseError as exc:
        line, column = exc.GetLine(), exc.GetColumn()
        path = _field_path_at(text, line, column) if line else ""
        if field_prefix:  # text rendered from a spec: its line numbers would not match the user's file
            where = field_prefix + path if path else field_prefix.rstrip(".")
        else:
            where = f"{path} (line {line})" if path else f"line {line}" if line else ""
        problem, fix = _explain(str(exc).split(" : ", 1)[-1])
        raise TritonkitError(shown, where, problem, fix) from None
    again = text_format.Parse(text_format.MessageToString(config), ModelConfig())
    if again != config:
        raise TritonkitError(shown, field_prefix.rstrip("."), "config does not survive a protobuf round trip", "report this as a tritonkit bug")
    return config


def _explain(message: str) -> tuple[str, str]:
    """(problem, fix) for a text_format message; unknown field names get the closest real one."""
    unknown = _NO_FIELD.search(message)
    if unknown:
        type_name, field = unknown.groups()
        known = list(descriptor_pool.Default().FindMessageTypeByName(type_name).fields_by_name)
        close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
        fix = f"did you mean '{close[0]}'?" if close else f"use one of: {', '.join(sorted(known))}"
        return f"unknown field '{field}' in {type_name.rsplit('.', 1)[-1]}", fix
    message = re.sub(r"^'[^\n]*?': ", "", message)  # drop the echo of the offending line
    return f"not a valid Triton ModelConfig: {message.rstrip('.')}", "fix that field (see Triton's model_config.proto)"


def _field_path_at(text: str, line: int, column: int) -> str:
    """Dotted path of the field at `line`:`column` (1-based), e.g. `dynamic_batching.preferred_batch_size`."""
    stack: list[str | None] = []  # enclosing field names; None for an element of a `[ ... ]` list
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text) if not m.group().isspace() and not m.group().startswith("#")]
    target = sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + column - 1
    field = ""
    for i, (tok, pos) in enumerate(tokens):
        if pos > target:
            break
        nxt = tokens[i + 1][0] if i + 1 < len(tokens) else ""
        if re.match(r"[A-Za-z_]", tok) and nxt in (":", "{", "<", "["):
            field = tok
        elif tok in ("{", "<", "["):
            stack.append(None if tokens[i - 1][0] in ("[", ",") else field)
            field = ""
        elif tok in ("}", ">", "]") and stack:
            stack.pop()
            field = ""
    return ".".join([s for s in stack if s] + ([field] if field else []))
