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


def _gateway_hook(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(REPO_ROOT / "docs" / "hooks"))   # as mkdocs loads it: beside spec_reference
    return _hook("gateway_reference")


def test_the_gateway_page_lists_each_routes_parameters_as_its_request_model_checks_them(monkeypatch) -> None:
    from tritonkit.gateway.protocol import Refused
    from tritonkit.pipelines.llm.gateway.protocol import ChatRequest

    hook = _gateway_hook(monkeypatch)
    assert hook.MARKER in (REPO_ROOT / "docs" / "commands" / "gateway.md").read_text()
    assert "hooks/gateway_reference.py" in (REPO_ROOT / "mkdocs.yml").read_text()
    page = hook.render()
    routes = dict(re.findall(r"^### POST (\S+)\n\n(.*?)(?=\n### |\Z)", page, re.M | re.S))
    assert set(routes) >= {"/v1/chat/completions", "/v1/completions", "/v1/audio/speech",
                           "/v1/audio/transcriptions"}
    chat = routes["/v1/chat/completions"]
    for name, field in ChatRequest.model_fields.items():
        refused = any(isinstance(m, Refused) for m in field.metadata)
        assert (f"`{name}` (" in chat) == refused and (f"| `{name}` |" in chat) != refused, name
    assert "| `top_logprobs` | `integer` (≥ 0, ≤ 20) |" in chat
    assert "| `timestamp_granularities[]` |" in routes["/v1/audio/transcriptions"]


def test_the_tts_page_s_voice_table_is_the_gateway_s() -> None:
    from tritonkit.pipelines.tts.gateway.protocol import OPENAI_VOICES

    page = (REPO_ROOT / "docs" / "pipelines" / "tts.md").read_text()
    rows = re.findall(r"^\| ((?:`\w+`(?:, )?)+) \| `(\w+)` \|$", page, re.M)
    documented = {name: voice for names, voice in rows for name in re.findall(r"`(\w+)`", names)}
    assert documented == OPENAI_VOICES
