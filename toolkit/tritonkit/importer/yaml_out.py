"""Writes imported models as a readable tritonkit.yaml: short lists and flat mappings on one line."""
from typing import Any

import yaml


class _SpecDumper(yaml.SafeDumper):
    """Block style for structure, flow style for leaves such as `dims: [3, 32, 32]` or one tensor."""


def _is_leaf(value: Any) -> bool:
    return all(not isinstance(v, dict | list) for v in (value if isinstance(value, list) else [value]))


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flat = all(_is_leaf(v) and not isinstance(v, list) for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flat)


def _represent_dict(dumper: yaml.SafeDumper, data: dict[Any, Any]) -> yaml.Node:
    flat = len(data) <= 6 and all(_is_leaf(v) for v in data.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items(), flow_style=flat)


_SpecDumper.add_representer(list, _represent_list)
_SpecDumper.add_representer(dict, _represent_dict)


def dump_spec(models: dict[str, dict[str, Any]], repository: str) -> str:
    """The whole spec file text, with a header saying where it came from and what to run next."""
    header = (f"# Imported by `tritonkit import` from {repository}; `tritonkit build` writes the same configs.\n"
              "# Field names mirror config.pbtxt; run `tritonkit schema` for the full schema.\n")
    spec = {"version": 1, "models": models}
    body = yaml.dump(spec, Dumper=_SpecDumper, sort_keys=False, allow_unicode=True, width=120)
    return header + body
