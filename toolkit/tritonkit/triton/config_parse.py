"""Parses config text into Triton's ModelConfig protobuf and checks that nothing in the text was silently lost.

Triton parses config.pbtxt with protobuf's text format too, which quietly keeps only the last of two map
entries with the same key (`parameters`, an ensemble step's `input_map`) and accepts a singular field twice
when the first gives its default value (proto3 cannot tell it was set). The text is therefore parsed a
second time with a strict twin of ModelConfig (proto2, maps as plain repeated entries), where both show.
Text the strict twin accepts is parsed once: the lenient message is read from its bytes (a map entry is a
repeated entry message on the wire), so only text with a problem pays for the second, lenient text parse.
"""
import difflib
import re
from collections import Counter
from functools import cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format
from google.protobuf.message import DecodeError, Message

from tritonkit.errors import Problem, TritonkitError
from tritonkit.triton.model_config import pb

_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"?|\'(?:[^\'\\\n]|\\.)*\'?|[A-Za-z_][\w.]*|[-+]?[\w.]+|.')
_NO_FIELD = re.compile(r'Message type "([\w.]+)" has no field named "(\w+)"')


def parse_model_config(text: str, shown: str, field_prefix: str = "") -> pb.ModelConfig:
    """The parsed message; a parse error becomes a one-line problem naming the field and line."""
    strict = _strict_parse(text)
    clean = _clean(strict)
    if clean is not None:
        return clean
    try:
        config = text_format.Parse(text, pb.ModelConfig())
    except text_format.ParseError as exc:
        line, column = exc.GetLine(), exc.GetColumn()
        path = _field_path_at(text, line, column) if line else ""
        if field_prefix:  # text rendered from a spec: its line numbers would not match the user's file
            where = field_prefix + path if path else field_prefix.rstrip(".")
        else:
            where = f"{path} (line {line})" if path else f"line {line}" if line else ""
        problem, fix = _explain(str(exc).split(" : ", 1)[-1])
        raise TritonkitError(shown, where, problem, fix) from None
    lost = _silently_lost(text, strict, field_prefix)
    if lost:
        raise TritonkitError.of([Problem(shown, where, problem, fix) for where, problem, fix in lost])
    return config


@cache
def _strict_model_config() -> type[Message]:
    """ModelConfig as proto2 with its maps as repeated entry messages: every field the text gives stays visible."""
    proto = descriptor_pb2.FileDescriptorProto()
    pb.ModelConfig.DESCRIPTOR.file.CopyToProto(proto)
    proto.syntax = "proto2"  # scalars get presence, so a second value of a singular field is an error

    def unmap(messages) -> None:  # noqa: ANN001 - a repeated DescriptorProto field
        for message in messages:
            message.options.ClearField("map_entry")
            unmap(message.nested_type)
    unmap(proto.message_type)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(pb.ModelConfig.DESCRIPTOR.full_name))


def _strict_parse(text: str) -> Message | text_format.ParseError:
    """The strict twin's message for `text`, or its refusal: parsed once, read by `_clean` and `_silently_lost`."""
    try:
        return text_format.Parse(text, _strict_model_config()())
    except text_format.ParseError as exc:
        return exc


def _clean(strict: Message | text_format.ParseError) -> pb.ModelConfig | None:
    """The config when the strict twin accepted the text with no map key twice; None sends it down the slow path
    (the lenient parse names errors as Triton sees them, `_silently_lost` the values it drops)."""
    if isinstance(strict, text_format.ParseError) or _duplicate_map_keys(strict, ""):
        return None
    try:
        return pb.ModelConfig.FromString(strict.SerializeToString())
    except DecodeError:
        return None


def _silently_lost(text: str, strict: Message | text_format.ParseError, prefix: str) -> list[tuple[str, str, str]]:
    """(field, problem, fix) for every value in `text` that Triton's parser would drop without a word."""
    if isinstance(strict, text_format.ParseError):  # the lenient parse passed: a singular field given twice, or an
        if "should not have multiple" not in str(strict):  # enum number outside the enum, which proto3 keeps
            return []
        path = _field_path_at(text, strict.GetLine(), strict.GetColumn())
        where = prefix + path if prefix else f"{path} (line {strict.GetLine()})"
        return [(where, "given more than once, first with its default value "
                 "(the parser keeps only the last, without a word)", "give the field once")]
    return [(prefix + path, f"key '{key}' given more than once (the parser keeps only the last entry, without a word)",
             "give each key once") for path, key in _duplicate_map_keys(strict, "")]


def _duplicate_map_keys(message: Message, path: str) -> list[tuple[str, str]]:
    """(dotted path, key) for each map key repeated within one map of the strict message."""
    found: list[tuple[str, str]] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        here = path + field.name
        entries = value if field.label == field.LABEL_REPEATED else [value]
        real = descriptor_pool.Default().FindMessageTypeByName(field.message_type.full_name)
        if real.GetOptions().map_entry:
            found += [(here, str(key)) for key, n in Counter(e.key for e in entries).items() if n > 1]
        for entry in entries:
            found += _duplicate_map_keys(entry, here + ".")
    return found


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
    tokens = [(m.group(), m.start()) for m in _TOKEN.finditer(text) if not m.group().isspace()
              and not m.group().startswith("#")]
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
