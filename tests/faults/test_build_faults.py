"""`tritonkit build` into a read-only or full disk: one line, exit 2, the previous repository intact.

Disk full is simulated without root: the build runs with `RLIMIT_FSIZE` lowered (and SIGXFSZ
ignored), so a write past the limit fails with EFBIG ("File too large") as it would with ENOSPC.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow  # builds under a disk quota and a read-only folder: seconds each

SPEC = """
version: 1
models:
  scorer:
    backend: python
    max_batch_size: 8
    input: [{name: X, data_type: fp32, dims: [4]}]
    output: [{name: Y, data_type: fp32, dims: [4]}]
    instance_group: [{kind: KIND_CPU, count: 1}]
    files: {model.py: model.py, weights.bin: weights.bin}
"""


def _project(root: Path) -> Path:
    (root / "tritonkit.yaml").write_text(SPEC)
    (root / "model.py").write_text("# model\n")
    (root / "weights.bin").write_bytes(bytes(range(256)) * 64)  # 16 KiB
    return root


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _build_limited(project: Path, max_bytes: int) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))

    return subprocess.run([sys.executable, "-m", "tritonkit", "build"], cwd=project, capture_output=True, text=True,
                          timeout=120, preexec_fn=limit)


def _leftovers(project: Path) -> list[str]:
    return sorted(p.name for p in project.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def test_a_full_disk_during_build_is_one_line_and_keeps_the_previous_repository(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert run_cli("build", cwd=project).returncode == 0
    before = _tree(project / "model_repository")
    (project / "weights.bin").write_bytes(bytes(range(256)) * 128)  # the new build needs 32 KiB for it
    result = _build_limited(project, 20_000)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "File too large" in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert _tree(project / "model_repository") == before
    assert _leftovers(project) == []


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` read-only: chmod for an ordinary user; root ignores modes, so a read-only bind mount there."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "--bind", "-o", "ro", str(folder), str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"root without mount rights cannot make a folder read-only: {mounted.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_a_read_only_output_folder_is_one_line_and_keeps_the_previous_repository(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert run_cli("build", "-o", "out/repo", cwd=project).returncode == 0
    before = _tree(project / "out" / "repo")
    (project / "model.py").write_text("# model, changed\n")
    with read_only(project / "out"):
        result = run_cli("build", "-o", "out/repo", cwd=project)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "out" in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert "Read-only file system" in lines[0] or "Permission denied" in lines[0]
    assert "the previous repository is unchanged" in lines[0]
    assert _tree(project / "out" / "repo") == before
    assert _leftovers(project / "out") == []
