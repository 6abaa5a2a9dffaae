"""Per-request settings from Triton request inputs and request parameters (inputs win).

Inputs arrive as numpy arrays (batch dimension included or not); parameters as the request's JSON
parameters (HTTP `"parameters": {...}`, gRPC `parameters=`). Errors name the input and what is allowed.
"""
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from .grammar import KINDS, constraint_of
from .sampling import SamplingParams

#: Input/parameter names (the pipeline's request vocabulary), with the Python type each holds.
SCALARS = {"max_tokens": int, "temperature": float, "top_k": int, "top_p": float, "seed": int, "ignore_eos": bool,
           "presence_penalty": float, "frequency_penalty": float, "logprobs": int, "prompt_logprobs": int}
LISTS = {"stop": str, "stop_token_ids": int, "logit_bias_ids": int, "logit_bias_values": float}


def _item(value: Any) -> Any:
    """A numpy scalar as a Python value (object-array elements already are one)."""
    return value.item() if isinstance(value, np.generic) else value


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, (bytes, np.bytes_)) else str(value)


def _scalar(name: str, value: Any, kind: type) -> Any:
    try:
        if kind is bool:
            if isinstance(value, (bytes, str, np.bytes_)):
                text = _text(value).strip().lower()
                if text not in ("true", "false", "1", "0"):
                    raise ValueError(text)
                return text in ("true", "1")
            return bool(value)
        if kind is int:
            if isinstance(value, (float, np.floating)) and not float(value).is_integer():
                raise ValueError(value)
            return int(_text(value)) if isinstance(value, (bytes, str, np.bytes_)) else int(value)
        return float(_text(value)) if isinstance(value, (bytes, str, np.bytes_)) else float(value)
    except (TypeError, ValueError):
        wanted = "a boolean" if kind is bool else "an integer" if kind is int else "a number"
        raise ValueError(f"'{name}' must be {wanted}, got {value!r}") from None


def _list(name: str, value: Any, kind: type) -> tuple:
    if isinstance(value, np.ndarray):
        items = value.reshape(-1).tolist()
    elif isinstance(value, (list, tuple)):
        items = list(value)
    elif isinstance(value, str) and value.startswith("["):  # a parameter carrying a JSON list
        try:
            items = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"'{name}' parameter is not a JSON list: {value!r}") from None
    else:
        items = [value]
    if kind is str:
        return tuple(_text(v) for v in items)
    return tuple(_scalar(name, v, kind) for v in items)


def parse_parameters(raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """The request's parameters as a dict (the Python backend hands them over as a JSON string)."""
    if not raw:
        return {}
    return dict(json.loads(raw)) if isinstance(raw, str) else dict(raw)


def settings(inputs: Mapping[str, np.ndarray], parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The sampling settings a request gives, typed: an input wins over a request parameter; a grammar (one of
    json_schema, regex, choice, grammar) as `constraint`. Unknown names are ignored."""
    values: dict[str, Any] = {}
    for name, kind in SCALARS.items():
        if name in inputs:
            flat = np.asarray(inputs[name]).reshape(-1)
            if flat.size != 1:
                raise ValueError(f"input '{name}' must hold one value, got {flat.size}")
            values[name] = _scalar(name, _item(flat[0]), kind)
        elif name in parameters:
            values[name] = _scalar(name, parameters[name], kind)
    for name, kind in LISTS.items():
        if name in inputs:
            values[name] = _list(name, inputs[name], kind)
        elif name in parameters:
            values[name] = _list(name, parameters[name], kind)
    ids, biases = values.pop("logit_bias_ids", ()), values.pop("logit_bias_values", ())
    if len(ids) != len(biases):
        raise ValueError(f"logit_bias_ids ({len(ids)}) and logit_bias_values ({len(biases)}) must be as long")
    if ids:
        values["logit_bias"] = tuple(zip(ids, biases))
    grammars: dict[str, Any] = {name: text(inputs, parameters, name) for name in KINDS if name != "choice"}
    if "choice" in inputs or "choice" in parameters:
        grammars["choice"] = _list("choice", inputs.get("choice", parameters.get("choice")), str)
    constraint = constraint_of(grammars)
    if constraint is not None:
        values["constraint"] = constraint
    return values


def sampling_params(inputs: Mapping[str, np.ndarray], parameters: Mapping[str, Any],
                    default_max_tokens: int | None = None) -> SamplingParams:
    """SamplingParams from the request (see `settings`), `default_max_tokens` when it names none (None: the rest
    of the context)."""
    return SamplingParams(**({"max_tokens": default_max_tokens} | settings(inputs, parameters)))


def flag(inputs: Mapping[str, np.ndarray], parameters: Mapping[str, Any], name: str, default: bool = False) -> bool:
    """A boolean from an input or a parameter."""
    if name in inputs:
        return _scalar(name, _item(np.asarray(inputs[name]).reshape(-1)[0]), bool)
    if name in parameters:
        return _scalar(name, parameters[name], bool)
    return default


def text(inputs: Mapping[str, np.ndarray], parameters: Mapping[str, Any], name: str) -> str | None:
    """A string from an input (first element) or a parameter."""
    if name in inputs:
        flat = np.asarray(inputs[name]).reshape(-1)
        return _text(flat[0]) if flat.size else ""
    if name in parameters:
        return _text(parameters[name])
    return None
