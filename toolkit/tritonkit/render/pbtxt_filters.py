"""Jinja filters that format values as protobuf text, so templates never hand-escape anything."""
from pathlib import PurePosixPath

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Control characters and Unicode line breaks: a raw NUL ends a string for Triton's C++ parser, and line
# breaks such as U+2028 would split the literal across lines. They are written as octal UTF-8 bytes.
_OCTAL = {chr(c) for c in range(32)} | {"\x7f", "\x85", "\u2028", "\u2029"}


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch in _OCTAL:
        return "".join(f"\\{byte:03o}" for byte in ch.encode("utf-8"))
    return ch


def quote(value: object) -> str:
    """A protobuf text-format string literal (other non-ASCII UTF-8 kept as is)."""
    if not isinstance(value, str):
        raise TypeError(f"expected a string to quote, got {type(value).__name__}")
    return '"' + "".join(_escape(ch) for ch in value) + '"'


def pb_bool(value: object) -> str:
    """`true`/`false` as protobuf text writes booleans."""
    if not isinstance(value, bool):
        raise TypeError(f"expected a boolean, got {type(value).__name__}")
    return "true" if value else "false"


def pb_string_value(value: object) -> str:
    """A spec scalar as the string Triton parameters carry (`true`, `4`, `0.5`, text)."""
    return pb_bool(value) if isinstance(value, bool) else str(value)


def basename(value: str) -> str:
    """File name part of a spec path (warmup files are copied flat into `<model>/warmup/`)."""
    return PurePosixPath(value).name


FILTERS = {"q": quote, "pb": pb_bool, "pbstr": pb_string_value, "basename": basename}
