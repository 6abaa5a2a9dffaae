"""`tritonkit import` -> `tritonkit build` reproduces every config of every repository in the test data.

Each repository in tests/data/triton_docs/ and the kitchen sink's built repository is imported through the
real CLI into a fresh project, built, and both sides' config.pbtxt are parsed into Triton's ModelConfig and
compared with protobuf equality, model by model; the version folders' files must be byte-identical.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as pb

from tests.conftest import REPO_ROOT, run_cli

DOCS = REPO_ROOT / "tests" / "data" / "triton_docs"
KITCHEN_SINK = REPO_ROOT / "tests" / "data" / "kitchen_sink"
DOCS_REPOSITORIES = sorted(p.name for p in DOCS.iterdir() if p.is_dir())


def loaded_config(model_dir: Path) -> pb.ModelConfig:
    """The config as Triton loads it. The only fills: a missing `name` is the folder's, and a warmup sample
    without `count` runs once (Triton reads 0 as 1; the spec always writes it). An instance group without
    `count` must stay without it: Triton's default depends on the backend (2 CPU instances for onnxruntime)."""
    config = text_format.Parse((model_dir / "config.pbtxt").read_text(encoding="utf-8"), pb.ModelConfig())
    config.name = config.name or model_dir.name
    for item in config.model_warmup:
        item.count = item.count or 1
    return config


def model_files(model_dir: Path) -> dict[str, bytes]:
    """Files of the version folders, warmup inputs and initial states, by path inside the model folder."""
    def wanted(rel: Path) -> bool:
        return (rel.parts[0].isdigit() or rel.parts[0] in ("warmup", "initial_state")) and rel.name != ".gitkeep"

    return {
        p.relative_to(model_dir).as_posix(): p.read_bytes()
        for p in sorted(model_dir.rglob("*"))
        if p.is_file() and wanted(p.relative_to(model_dir))
    }


def import_and_build(repository: Path, project: Path) -> dict:
    imported = run_cli("import", str(repository), "-o", str(project / "tritonkit.yaml"), "--json", cwd=project.parent)
    assert imported.returncode == 0, imported.stderr
    built = run_cli("build", "--json", cwd=project)
    assert built.returncode == 0, built.stderr + (project / "tritonkit.yaml").read_text()
    return json.loads(imported.stdout)


def assert_same_repository(original: Path, rebuilt: Path) -> None:
    models = sorted(p.name for p in original.iterdir() if (p / "config.pbtxt").is_file())
    assert models and sorted(p.name for p in rebuilt.iterdir() if p.is_dir()) == models
    for name in models:
        expected, got = loaded_config(original / name), loaded_config(rebuilt / name)
        assert got == expected, f"{name}:\n--- original\n{expected}\n--- rebuilt\n{got}"
        assert model_files(rebuilt / name) == model_files(original / name), name


def test_every_docs_repository_is_in_the_test() -> None:
    assert DOCS_REPOSITORIES == ["bls", "decoupled", "dynamic_batching", "ensemble", "sequence_batching"]


@pytest.mark.slow  # import, build and compare through the CLI: seconds each
@pytest.mark.parametrize("repository", DOCS_REPOSITORIES)
def test_docs_repository_round_trips(repository: str, tmp_path: Path) -> None:
    summary = import_and_build(DOCS / repository, tmp_path / "project")
    assert summary["ok"] and summary["not_imported"] == []
    assert_same_repository(DOCS / repository, tmp_path / "project" / "model_repository")


@pytest.mark.slow  # import, build and compare through the CLI: seconds each
def test_kitchen_sink_round_trips(tmp_path: Path) -> None:
    sink = tmp_path / "sink"
    shutil.copytree(KITCHEN_SINK, sink, ignore=shutil.ignore_patterns("golden"))
    built = run_cli("build", "--json", cwd=sink)
    assert built.returncode == 0, built.stderr
    summary = import_and_build(sink / "model_repository", tmp_path / "project")
    assert sorted(summary["models"]) == ["pipeline", "ragged_onnx", "stateful_direct", "streaming_oldest", "warm"]
    assert_same_repository(sink / "model_repository", tmp_path / "project" / "model_repository")


@pytest.mark.slow  # import, build and compare through the CLI: seconds each
def test_versions_with_different_files_keep_their_own(tmp_path: Path) -> None:
    import_and_build(DOCS / "dynamic_batching", tmp_path / "project")
    rebuilt = tmp_path / "project" / "model_repository" / "priority_scorer"
    assert (rebuilt / "1" / "model.py").read_text() != (rebuilt / "2" / "model.py").read_text()
