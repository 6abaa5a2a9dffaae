"""The spec reference page is the schema: every object and field of `tritonkit schema` has its row, linked by type."""
from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from tests.conftest import REPO_ROOT
from tritonkit.spec.project import ProjectFile


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("spec_reference", REPO_ROOT / "docs" / "hooks" / "spec_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_object_and_field_of_the_schema_is_on_the_page() -> None:
    schema = ProjectFile.model_json_schema()
    page = _hook().render(schema)
    headings = re.findall(r"^## (\w+)$", page, re.M)
    assert sorted(headings) == sorted(schema["$defs"]), "each schema object gets one section"
    for name, node in schema["$defs"].items():
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for field in node.get("properties", {}):
            assert f"| `{field}` |" in section, f"{name}.{field} has no row"
    for field in schema["properties"]:
        assert f"| `{field}` |" in page.split("\n## ", 1)[0], f"top-level {field} has no row"


def test_types_link_to_their_object_and_descriptions_come_from_the_code() -> None:
    page = _hook().render(ProjectFile.model_json_schema())
    assert "| `models` | map: name → [ModelSpec](#modelspec) |" in page
    instance_group = page.split("\n## InstanceGroup\n", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"\| `count` \| `integer` \| `null` \| Instances of this group", instance_group), instance_group


def test_the_page_holds_the_marker_the_hook_replaces() -> None:
    hook = _hook()
    assert hook.MARKER in (REPO_ROOT / "docs" / "reference" / "spec.md").read_text()
    assert "hooks/spec_reference.py" in (REPO_ROOT / "mkdocs.yml").read_text()
