"""What tritonkit writes is readable by the container that serves it: the built repository, the compose files
and a rewritten spec get ordinary modes (the umask's), not the private 0600/0700 of temporary files, which a
Triton container running as uid 1000 cannot read from a bind mount."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tritonkit.files import write_text_atomically


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow  # a full build: seconds
def test_a_built_repository_and_its_compose_files_are_world_readable(tmp_path: Path, umask_022: None) -> None:
    project = tmp_path / "demo"
    assert run_cli("init", str(project)).returncode == 0
    done = run_cli("build", cwd=project)
    assert done.returncode == 0, done.stderr
    repository = project / "model_repository"
    folders = [repository, *(p for p in repository.rglob("*") if p.is_dir())]
    files = [p for p in repository.rglob("*") if p.is_file()] + [project / "docker-compose.yml"]
    assert {p.relative_to(project).as_posix(): oct(_mode(p)) for p in folders if _mode(p) != 0o755} == {}
    assert {p.relative_to(project).as_posix(): oct(_mode(p)) for p in files if _mode(p) != 0o644} == {}


def test_a_rewritten_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path: Path, umask_022: None) -> None:
    spec = tmp_path / "tritonkit.yaml"
    spec.write_text("version: 1\n")
    spec.chmod(0o640)
    write_text_atomically(spec, "version: 1\nmodels: {}\n")   # as tune's write-back and import rewrite a spec
    assert (_mode(spec), spec.read_text()) == (0o640, "version: 1\nmodels: {}\n")
    write_text_atomically(tmp_path / "new.yml", "x: 1\n")
    assert _mode(tmp_path / "new.yml") == 0o644
