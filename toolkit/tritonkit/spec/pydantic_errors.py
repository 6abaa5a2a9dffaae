"""Turns pydantic validation errors into located problems with a fix."""
import re
import reprlib
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from tritonkit.errors import Problem

#: how a bad value is quoted in a message: cut short, however big or deeply nested it is
_SHORT = reprlib.Repr()   # keyword arguments need Python 3.12
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 2, 4, 4, 40, 40, 40
_TYPE_TAG = re.compile(r"^(function-\w+|[a-z_]+\[.*\]|str|int|float|bool|list|dict|none|literal\[.*\])$")


def field_path(loc: tuple[Any, ...]) -> str:
    """`('models', 'enc', 'input', 0, 'dims')` -> `models.enc.input[0].dims` (union tags dropped).

    A bad mapping key arrives as `(..., key, '[key]')`; it is shown as `models.5`, not `models[5].[key]`.
    """
    out = ""
    for index, part in enumerate(loc):
        if part == "[key]":
            continue
        if index + 1 < len(loc) and loc[index + 1] == "[key]":
            out += ("." if out else "") + str(part)
        elif isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and _TYPE_TAG.match(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _yaml_word(value: Any) -> str:
    """How YAML writes a null or boolean (`null`, `true`): pydantic and Python would say None, True or 1."""
    return "null" if value is None else str(value).lower()


def _got(value: Any, with_type: bool = False) -> str:
    """A bad value as the message quotes it: null (empty) and booleans in YAML's words, not Python's."""
    if value is None:
        return "null (empty)"
    if isinstance(value, bool):
        return f"boolean {_yaml_word(value)}"
    return f"{type(value).__name__} {_SHORT.repr(value)}" if with_type else _SHORT.repr(value)


def _is_odd_key(err: ErrorDetails) -> bool:
    """A mapping key YAML 1.1 read as a boolean or null (`yes:`, `off:`, `null:`, `~:`), not as the name written."""
    value = err.get("input")
    return err["loc"][-1:] == ("[key]",) and (value is None or isinstance(value, bool))


def _location(err: ErrorDetails) -> tuple[Any, ...]:
    """err's loc, with an odd key named as YAML read it (`true`, `null`) where pydantic has 1 or 'None'."""
    loc = tuple(err["loc"])
    return loc[:-2] + (_yaml_word(err.get("input")), "[key]") if _is_odd_key(err) else loc


def _problem_and_fix(err: ErrorDetails) -> tuple[str, str, str]:
    """(extra field segment, problem, fix) for one pydantic error."""
    kind, msg, value = err["type"], err["msg"], err.get("input")
    ctx = err.get("ctx") or {}
    if _is_odd_key(err):
        if value is None:
            return ("", "the key is read as null, not a name (YAML reads an unquoted null or ~ so)",
                    'quote it, e.g. "null":')
        return "", (f"the key is read as boolean {_yaml_word(value)}, not a name (YAML 1.1 reads unquoted yes, no, on, "
                    "off, true and false so)"), 'quote it, e.g. "yes": or "on":'
    if kind == "unknown_key":
        return (ctx["key"], f"unknown key '{ctx['key']}'",
                ctx["hint"] if ctx["hint"].startswith("did") else f"remove it ({ctx['hint']})")
    if kind == "missing":
        return "", "required key is missing", "add it (see `tritonkit schema`)"
    if kind == "data_type":
        return "", *_split(msg, "use a Triton type such as TYPE_FP32")
    if kind == "literal_error":
        return "", f"{_SHORT.repr(value)} is not allowed", "use one of " + ctx.get("expected", "the allowed values")
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return "", f"expected a whole number, got {_got(value)}", "write an integer"
    if kind in ("float_parsing", "float_type"):
        return "", f"expected a number, got {_got(value)}", "write a number"
    if kind in ("bool_parsing", "bool_type"):
        return "", f"expected true or false, got {_got(value)}", "write true or false"
    if kind in ("string_type",):
        return "", f"expected a string, got {_got(value, with_type=True)}", "quote the value"
    if kind in ("list_type",):
        return "", f"expected a list, got {_got(value, with_type=True)}", "write a YAML list, e.g. [1, 2]"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "", f"expected a mapping, got {_got(value, with_type=True)}", "write key: value pairs"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return "", f"{_SHORT.repr(value)} is out of range", msg.replace("Input should be", "it must be")
    if kind in ("too_short", "string_too_short"):
        return "", "is empty", "give at least one entry" if kind == "too_short" else "give a non-empty value"
    if kind == "value_error":
        return "", *_split(msg.removeprefix("Value error, "), "correct it (see `tritonkit schema`)")
    return "", msg, "see `tritonkit schema` for the expected form"


def _split(message: str, default_fix: str) -> tuple[str, str]:
    """A validator's `problem; fix` message as (problem, fix); messages without a fix get `default_fix`."""
    problem, sep, fix = message.partition("; ")
    return (problem, fix) if sep else (message, default_fix)


def problems_from_validation(exc: ValidationError, shown: str, prefix: tuple[Any, ...] = ()) -> list[Problem]:
    """One problem per distinct field, in the order pydantic found them."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for err in exc.errors():
        extra, problem, fix = _problem_and_fix(err)
        path = field_path(prefix + _location(err) + ((extra,) if extra else ()))
        if path in seen:
            continue
        seen.add(path)
        problems.append(Problem(shown, path, problem, fix))
    return problems
