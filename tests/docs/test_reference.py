"""The reference pages are the code: the spec page has every schema object and field, the CLI page every --help."""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from types import ModuleType

import pytest

from tests.conftest import REPO_ROOT
from tritonkit.cli.main import COMMANDS
from tritonkit.spec.project import ProjectFile


def _hook(name: str = "spec_reference") -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "docs" / "hooks" / f"{name}.py")
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


def test_types_link_to_their_object_show_their_bounds_and_descriptions_come_from_the_code() -> None:
    page = _hook().render(ProjectFile.model_json_schema())
    assert "| `models` | map: name → [ModelSpec](#modelspec) |" in page
    instance_group = page.split("\n## InstanceGroup\n", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"\| `count` \| `integer` \(≥ 1\) \| `null` \| Instances of this group", instance_group), (
        instance_group
    )  # bounds shown


def test_the_page_holds_the_marker_the_hook_replaces() -> None:
    hook = _hook()
    assert hook.MARKER in (REPO_ROOT / "docs" / "reference" / "spec.md").read_text()
    assert "hooks/spec_reference.py" in (REPO_ROOT / "mkdocs.yml").read_text()


def _cli_sections() -> dict[str, str]:
    page = _hook("cli_reference").render()
    return dict(re.findall(r"^#+ (tritonkit[\w -]*)\n\n```text\n(.*?)\n```", page, re.M | re.S))


@pytest.mark.slow  # runs each command's --help in a child process
def test_the_cli_page_has_every_command() -> None:
    sections = _cli_sections()
    assert {f"tritonkit {name}" for name in COMMANDS} | {"tritonkit"} <= set(sections)
    assert {"tritonkit deploy k8s", "tritonkit deploy kserve"} <= set(sections), "a group's subcommands are listed too"


@pytest.mark.slow  # runs each command's --help in a child process
@pytest.mark.parametrize("command", ["", "status", "deploy k8s", "build"])
def test_a_cli_section_is_what_the_terminal_prints(command: str) -> None:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}   # a wide terminal: click caps help at the group's 100
    printed = subprocess.run([sys.executable, "-m", "tritonkit", *command.split(), "--help"], capture_output=True,
                             text=True,
                             env=env, check=True).stdout
    assert _cli_sections()[f"tritonkit {command}".strip()] == printed.rstrip().replace(
        "python -m tritonkit", "tritonkit"
    )
