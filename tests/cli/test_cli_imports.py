"""What `tritonkit --version`, `--help` and `validate` import: none of the export or serving stacks.

Importing every command module would bring torch tooling, tritonclient's HTTP and gRPC clients, jinja2 and the
pydantic spec models (over a second); these commands need none of it. Each case runs
`python -m tritonkit ...` in a fresh interpreter and reads its `sys.modules` afterwards.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tritonkit.cli.main import COMMANDS, cli

DOCS = Path(__file__).resolve().parents[1] / "data" / "triton_docs"

#: Modules none of the three commands may import: model export, the clients, templating, the spec models.
HEAVY = ["torch", "onnx", "onnxruntime", "tritonclient.http", "tritonclient.grpc", "grpc", "jinja2", "numpy",
         "pydantic", "yaml", "tritonkit.spec.model", "tritonkit.spec.loader"]

PROBE = """
import json, runpy, sys
sys.argv = ["tritonkit", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("tritonkit", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""


def modules_after(args: list[str], cwd: Path) -> set[str]:
    """The modules loaded by `python -m tritonkit ARGS`, which must exit 0."""
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args)], cwd=cwd, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["exit"] == 0, proc.stdout + proc.stderr
    return set(report["modules"])


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_no_command(option: str, tmp_path: Path) -> None:
    modules = modules_after([option], tmp_path)
    # the plugin host is the standard library's only: the registry it names is imported when a command runs
    assert sorted(m for m in modules if m.startswith("tritonkit.")) == ["tritonkit.cli", "tritonkit.cli.main",
                                                                        "tritonkit.plugin", "tritonkit.plugin.host"]
    assert not modules & {*HEAVY, "google.protobuf"}


@pytest.mark.parametrize("repository", sorted(p.name for p in DOCS.iterdir() if p.is_dir()))
def test_validate_imports_only_the_checks(repository: str) -> None:
    modules = modules_after(["validate", repository], DOCS)
    assert "tritonkit.validate.repository_check" in modules
    assert "tritonclient.grpc.model_config_pb2" in modules  # loaded from its file, without its package
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_stop_with_nothing_running_loads_neither_the_server_nor_numpy(tmp_path: Path) -> None:
    """`tritonkit stop` reads the state file and signals a pid; the server module (fallbacks, numpy) took 0.1 s."""
    modules = modules_after(["stop"], tmp_path)
    assert "tritonkit.serve.background" in modules
    assert not modules & {*HEAVY, "tritonkit.serve.server"}, sorted(modules & {*HEAVY, "tritonkit.serve.server"})


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_listed_short_help_is_the_commands_own(name: str) -> None:
    """The short help stored for `--help` is the first docstring line, so it cannot drift from the command."""
    command = COMMANDS[name].load()
    assert command.name == name
    assert command.help is not None
    assert COMMANDS[name].short_help == command.help.splitlines()[0] == command.get_short_help_str(limit=10_000)


@pytest.mark.parametrize("width", [50, 80, 100])
def test_help_lists_commands_as_an_eager_group_would(width: int) -> None:
    """click's own listing, which imports every command for its docstring, writes the same text."""
    ctx = click.Context(cli, info_name="tritonkit", terminal_width=width)
    lazy, eager = ctx.make_formatter(), ctx.make_formatter()
    cli.format_commands(ctx, lazy)
    click.Group.format_commands(cli, ctx, eager)
    assert lazy.getvalue() == eager.getvalue()
    assert all(f"  {name} " in lazy.getvalue() for name in COMMANDS)
