"""Reads YAML strictly: syntax errors and duplicate keys become located, one-line problems."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tritonkit.errors import TritonkitError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys instead of keeping the last one."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}'", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml_mapping(path: Path, shown: str) -> dict[str, Any]:
    """Loads `path` as a mapping; `shown` is how the file is named in errors."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TritonkitError(shown, "", "file not found", "create it or pass the right path with -f") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TritonkitError(shown, "", f"cannot read file ({exc.__class__.__name__})", "check the path and that it is UTF-8 text") from None
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader derives from SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise TritonkitError(shown, where, f"invalid YAML: {problem}", "fix the YAML syntax at that position") from None
    except yaml.YAMLError as exc:
        raise TritonkitError(shown, "", f"invalid YAML: {exc}", "fix the YAML syntax") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TritonkitError(shown, "top level", f"is a {type(data).__name__}, not a mapping", "start the file with keys such as 'models:'")
    return data
