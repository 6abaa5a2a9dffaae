"""An export rebuilt in another folder is byte-identical, so publishing it again uploads nothing.

torch.onnx recorded a stack trace with the build's absolute paths on every node: the same spec built in two
folders gave two different model.onnx files, and `publish` took the second for a new version.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import onnx
import pytest

from tests.conftest import REPO_ROOT, run_cli

pytestmark = [pytest.mark.slow]

SPEC = """
version: 1
models:
  mlp:
    source: {python: examples.models.mlp:build}
    max_batch_size: 8
"""


def build_in(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copytree(REPO_ROOT / "examples" / "models", folder / "examples" / "models",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "examples" / "__init__.py").touch()
    (folder / "tritonkit.yaml").write_text(SPEC)
    result = run_cli("build", cwd=folder, timeout=600)
    assert result.returncode == 0, result.stderr
    return folder / "model_repository"


def files(repository: Path) -> dict[str, bytes]:
    return {p.relative_to(repository).as_posix(): p.read_bytes() for p in sorted(repository.rglob("*")) if p.is_file()}


def test_the_same_spec_built_in_two_folders_is_byte_identical_and_not_republished(tmp_path: Path) -> None:
    first = build_in(tmp_path / "a")
    second = build_in(tmp_path / "elsewhere" / "another-project")
    assert "mlp/1/model.onnx" in files(first)
    assert files(first) == files(second)
    model = onnx.load(str(second / "mlp" / "1" / "model.onnx"))
    assert not any(str(tmp_path) in prop.value for node in model.graph.node for prop in node.metadata_props)

    dest = tmp_path / "published"
    assert run_cli("publish", str(dest), "--json", cwd=first.parent).returncode == 0
    again = run_cli("publish", str(dest), "--json", cwd=second.parent)
    assert again.returncode == 0, again.stderr
    outcome = json.loads(again.stdout)
    assert outcome["published"] == {} and outcome["uploaded"] == 0 and outcome["unchanged"] == ["mlp"], outcome
