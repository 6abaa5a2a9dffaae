"""mkdocs hook: the spec reference page, rendered at build time from the pydantic JSON Schema of tritonkit.yaml.

The page `reference/spec.md` holds the marker `<!-- spec-schema -->`; every field table below it comes from
the spec's JSON Schema (what `tritonkit schema` prints), so the reference cannot drift from the code.
The schema itself is written next to the site as `tritonkit.schema.json` for editors.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MARKER = "<!-- spec-schema -->"


def _schema() -> dict[str, Any]:
    from tritonkit.pipelines import registry
    from tritonkit.spec.schema import spec_schema

    registry.install()   # the shipped pipelines' sections, as `tritonkit schema` prints them
    return spec_schema().project_file.model_json_schema()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type(node: dict[str, Any]) -> str:
    """A field's type in words, with links to the objects it is made of."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in node:
        kinds = [_type(n) for n in node["anyOf"] if n.get("type") != "null"]
        return " or ".join(kinds)
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return "one of " + ", ".join(f"`{v}`" for v in node["enum"])
    kind = node.get("type")
    if kind == "array":
        return f"list of {_type(node.get('items', {}))}" if node.get("items") else "list"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map: name → {_type(node['additionalProperties'])}"
    bounds = [f"{sign} {node[key]}" for key, sign in _BOUNDS if key in node]
    return (f"`{kind}`" if kind else "any") + (f" ({', '.join(bounds)})" if bounds else "")


_BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def _refs(node: Any) -> list[str]:
    """Object names a schema node refers to, in order of appearance."""
    if isinstance(node, dict):
        found = [node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else []
        return found + [name for value in node.values() for name in _refs(value)]
    if isinstance(node, list):
        return [name for value in node for name in _refs(value)]
    return []


def _table(node: dict[str, Any]) -> list[str]:
    required = set(node.get("required", []))
    rows = ["| field | type | default | description |", "|---|---|---|---|"]
    for name, field in node.get("properties", {}).items():
        shown = f"`{json.dumps(field['default'])}`" if "default" in field else ""
        default = "required" if name in required else shown
        rows.append(f"| `{name}` | {_cell(_type(field))} | {_cell(default)} | {_cell(field.get('description', ''))} |")
    return rows


def render(schema: dict[str, Any]) -> str:
    """Markdown: the top level, then every object reachable from it, in the order a reader meets them."""
    defs = schema.get("$defs", {})
    out = ["## tritonkit.yaml (top level)", "", _cell(schema.get("description", "")), "", *_table(schema), ""]
    order: list[str] = []
    queue = _refs(schema.get("properties", {}))
    while queue:
        name = queue.pop(0)
        if name in order or name not in defs:
            continue
        order.append(name)
        queue.extend(_refs(defs[name].get("properties", {})) + _refs(defs[name].get("anyOf", [])))
    order += sorted(set(defs) - set(order))
    for name in order:
        node = defs[name]
        out += [f"## {name}", "", _cell(node.get("description", ""))]
        if "properties" in node:
            out += ["", *_table(node)]
        elif "enum" in node:
            out += ["", "One of " + ", ".join(f"`{v}`" for v in node["enum"]) + "."]
        out.append("")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown.replace(MARKER, render(_schema())) if MARKER in markdown else markdown


def on_post_build(config: Any) -> None:
    Path(config["site_dir"], "tritonkit.schema.json").write_text(json.dumps(_schema(), indent=2) + "\n")
