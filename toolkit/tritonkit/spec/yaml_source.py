"""Reads YAML strictly: syntax errors and duplicate keys become located, one-line problems."""
from pathlib import Path
from typing import Any

import yaml

from tritonkit.errors import TritonkitError


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys instead of keeping the last one.

    A merge key (`<<: *base`) is not a duplicate, and neither is a key that overrides a merged one: both are
    how YAML users share settings between models, and SafeLoader's own mapping constructor applies them."""


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG:
            continue
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key '{key}'", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)

#: values a spec may hold once its aliases are expanded: far above any real spec, far below an alias bomb
#: ("billion laughs": nine aliases of nine aliases ... expand a 1 kB file to 10^9 values)
MAX_EXPANDED_VALUES = 1_000_000


def _expanded_size(node: yaml.Node, sizes: dict[int, int]) -> int:
    """How many values `node` stands for with every alias expanded; shared nodes are counted once per use.

    Memoized on node identity, so the count costs one pass over the composed nodes however large the
    expansion; a node that contains itself (`&a [*a]`) counts 1 here and is refused by the constructor.
    """
    key = id(node)
    if key in sizes:
        return sizes[key]
    sizes[key] = 1
    if isinstance(node, yaml.SequenceNode):
        sizes[key] = 1 + sum(_expanded_size(child, sizes) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        sizes[key] = 1 + sum(_expanded_size(k, sizes) + _expanded_size(v, sizes) for k, v in node.value)
    return sizes[key]


def _load(text: str, shown: str) -> Any:
    """yaml.load with the strict loader, refusing documents whose aliases expand past MAX_EXPANDED_VALUES."""
    loader = _StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is not None and _expanded_size(node, {}) > MAX_EXPANDED_VALUES:
            raise TritonkitError(shown, "top level", f"YAML aliases expand to more than {MAX_EXPANDED_VALUES:,} values",
                                 "write the values out instead of nesting aliases of aliases")
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def _not_utf8(shown: str, raw: bytes, exc: UnicodeDecodeError) -> TritonkitError:
    """Where the first byte that is not UTF-8 sits (line, column, byte offset), so the user can find it in an editor."""
    line_start = raw.rfind(b"\n", 0, exc.start) + 1
    line = raw.count(b"\n", 0, exc.start) + 1
    column = len(raw[line_start:exc.start].decode("utf-8")) + 1  # the bytes before the bad one decoded
    where = f"line {line}, column {column} (byte {exc.start})"
    return TritonkitError(shown, where, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
                          "save the file as UTF-8")


def read_yaml_mapping(path: Path, shown: str) -> dict[str, Any]:
    """Loads `path` as a mapping; `shown` is how the file is named in errors."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TritonkitError(shown, "file", "not found", "create it or pass the right path with -f") from None
    except OSError as exc:
        raise TritonkitError(shown, "file", f"cannot read it ({exc.strerror or exc.__class__.__name__})",
                             "check the path and its permissions") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8(shown, raw, exc) from None
    try:
        data = _load(text, shown)
    except RecursionError:
        raise TritonkitError(shown, "top level", "invalid YAML: values are nested too deeply to read",
                             "flatten the nesting (a spec needs a few levels)") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if problem.startswith("but ") and exc.context:  # "but found another document" needs what was expected
            problem = f"{exc.context.strip()}, {problem}"
        raise TritonkitError(shown, where, f"invalid YAML: {problem}", "fix the YAML syntax at that position") from None
    except yaml.YAMLError as exc:
        raise TritonkitError(shown, "", f"invalid YAML: {exc}", "fix the YAML syntax") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise TritonkitError(shown, "top level", f"is a {type(data).__name__}, not a mapping",
                             "start the file with keys such as 'models:'")
    return data
