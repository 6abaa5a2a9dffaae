"""The command a missing extra's line gives installs tritonkit from where it was installed, since no package index
has tritonkit: the checkout (an editable install, as `make setup` makes), a wheel file, else a sentence saying how.
The wheel is built from this checkout and installed without its dependencies into a fresh virtualenv (tritonkit's
package imports none of them to say the command)."""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tritonkit.extras import install_commands, install_extra

pytestmark = pytest.mark.slow
SAY = "from tritonkit.extras import install_extra; print(install_extra('serve'))"


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"{shlex.join(args)}:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result.stdout


def test_an_editable_checkout_is_named_by_its_path() -> None:
    assert install_extra("serve") == f"pip install -e '{REPO_ROOT}[serve]'"
    assert install_commands(["tritonkit[export]", "pillow", "tritonkit[llm]"]) == [
        f"pip install -e '{REPO_ROOT}[export,llm]'", "pip install pillow"]


def test_a_wheel_is_named_by_its_file_and_an_unknown_origin_says_how(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"), str(REPO_ROOT)],
         tmp_path, env)
    [wheel] = (tmp_path / "dist").glob("tritonkit-*.whl")
    _run([sys.executable, "-m", "venv", str(tmp_path / "venv")], tmp_path, env)
    python = str(tmp_path / "venv" / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], tmp_path, env)

    command = _run([python, "-c", SAY], tmp_path, env).strip()
    assert command == f"pip install '{wheel}[serve]'"
    pip = shlex.split(command)
    assert _run([python, "-m", *pip, "--no-deps", "--dry-run"], tmp_path, env)  # pip takes it as written

    [record] = (tmp_path / "venv").rglob("tritonkit-*.dist-info/direct_url.json")
    record.unlink()   # as after an install from an index, which records no origin
    assert _run([python, "-c", SAY], tmp_path, env).strip() == (
        "install tritonkit with the extra 'serve' from where you got it (a checkout: pip install "
        "'<checkout>[serve]'; a wheel: pip install '<wheel file>[serve]')")
    assert "pip install 'tritonkit[" not in command
