"""mkdocs hook: the gateway's parameter tables, rendered at build time from the request model each route checks its
requests with, so the parameters documented are the parameters checked.

The page `commands/gateway.md` holds the marker `<!-- gateway-parameters -->`: below it, a table per route of the
installed pipelines (name, type, default, what it does), and the parameters OpenAI defines that the route refuses.
"""
from __future__ import annotations

import json
from typing import Any

from pydantic import AliasChoices, BaseModel
from spec_reference import _cell, _type  # mkdocs puts the hooks' folder on the path while it loads them

MARKER = "<!-- gateway-parameters -->"


def _routes() -> list[tuple[str, type[BaseModel]]]:
    """(path, request model) of every route the installed pipelines serve, in the registry's order."""
    from tritonkit.gateway.protocol import request_model
    from tritonkit.pipelines import registry
    from tritonkit.plugin import host

    registry.install()
    found = []
    for pipeline in host.by_name():
        if pipeline.gateway is not None:
            endpoints = pipeline.gateway.endpoints()
            found += [(path, model) for path in pipeline.gateway.paths
                      if (model := request_model(endpoints[path])) is not None]
    return found


def _name(name: str, field: Any) -> str:
    alias = field.validation_alias
    return str(alias.choices[0]) if isinstance(alias, AliasChoices) else name


def table(model: type[BaseModel]) -> list[str]:
    """The model's parameters as Markdown: a table of those it takes, a line on those it refuses."""
    from tritonkit.gateway.protocol import Refused

    properties = model.model_json_schema(by_alias=True)["properties"]
    rows = ["| parameter | type | default | what |", "|---|---|---|---|"]
    refused = []
    fields = sorted(model.model_fields.items(), key=lambda item: not item[1].is_required())   # required first
    for name, field in fields:
        shown = _name(name, field)
        marks = [m for m in field.metadata if isinstance(m, Refused)]
        if marks:
            allowed = " or ".join(f"`{json.dumps(v)}`" for v in marks[0].allowed)
            refused.append(f"`{shown}` ({marks[0].why}{f'; accepted: {allowed}' if allowed else ''})")
            continue
        default = "required" if field.is_required() else f"`{json.dumps(field.default)}`" if field.default else ""
        kind = _type(_inlined(properties[shown]))
        rows.append(f"| `{shown}` | {_cell(kind)} | {default} | {_cell(field.description or '')} |")
    if refused:
        rows += ["", "Refused with a 400 `unsupported_parameter` unless absent or null: " + ", ".join(refused) + "."]
    return rows


def _inlined(node: dict[str, Any]) -> dict[str, Any]:
    """A nested model as a plain object (its fields are in the description): this page has no section to link."""
    if "$ref" in node:
        return {"type": "object"}
    if "items" in node:
        node = {**node, "items": _inlined(node["items"])}
    return {**node, "anyOf": [_inlined(n) for n in node["anyOf"]]} if "anyOf" in node else node


def render() -> str:
    out = []
    for path, model in _routes():
        out += [f"### POST {path}", "", *table(model), ""]
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
