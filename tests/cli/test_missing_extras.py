"""A missing extra is one line with the pip command: `build` without torch, and any command that meets a module
one of tritonkit's extras brings. torch is hidden by a package on PYTHONPATH that raises what a missing one does."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.smoke.test_smoke_embedded import copy_example
from tritonkit.extras import extras_providing, install_command, missing_module

#: The command for an extra in this test environment: tritonkit is the checkout, installed editable (`make setup`).
CHECKOUT = f"pip install -e '{REPO_ROOT}[{{}}]'"


def hide(module: str, root: Path) -> dict[str, str]:
    """An environment in which importing `module` fails as when it is not installed."""
    package = root / "hidden" / module
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(f"raise ModuleNotFoundError(\"No module named '{module}'\", "
                                         f"name={module!r})\n")
    return {**os.environ, "PYTHONPATH": str(root / "hidden")}


def test_extras_come_from_tritonkit_s_own_metadata() -> None:
    assert extras_providing("torch") == ["export"]
    assert install_command("pytriton") == CHECKOUT.format("serve")
    assert install_command("model_analyzer") == CHECKOUT.format("tune")
    assert install_command("kaldi_native_fbank") == CHECKOUT.format("asr")
    assert install_command("onnxruntime", prefer="tts") == CHECKOUT.format("tts")
    assert install_command("pytest") is None and install_command("no_such_module") is None  # dev tools, strangers
    assert missing_module("ModuleNotFoundError: No module named 'torch.nn'") == "torch"


@pytest.mark.slow  # a build in a child process: seconds
def test_build_without_torch_is_one_line_with_the_pip_command(tmp_path: Path) -> None:
    project = copy_example(tmp_path / "project")
    result = subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=project, capture_output=True, text=True,
                            timeout=300, env=hide("torch", tmp_path))
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if not line.startswith("[export ")]
    assert errors == ["tritonkit.yaml: models.mlp.export: exporting model 'mlp' needs the Python module 'torch', "
                      f"which is not installed; {CHECKOUT.format('export')}"]
    assert not (project / "model_repository").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_a_command_meeting_a_missing_extra_says_the_pip_command(tmp_path: Path, as_json: bool) -> None:
    program = textwrap.dedent("""
        import click
        from tritonkit.cli.output import json_option, reports_errors

        @click.command("needs-torch")
        @json_option
        @reports_errors
        def needs_torch(as_json):
            import torch  # noqa: F401

        needs_torch(prog_name="needs-torch")
        """)
    result = subprocess.run([sys.executable, "-c", program, *(["--json"] if as_json else [])], capture_output=True,
                            text=True, timeout=60, env=hide("torch", tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == ["needs-torch: needs the Python module 'torch', which is not installed; "
                                          + CHECKOUT.format("export")]
    assert ('"ok": false' in result.stdout) == as_json
