"""`tritonkit build` on the repository's own tritonkit.yaml, judged independently of the renderer."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from tests.cli.cli_contract import snapshot as every_path
from tests.conftest import copy_example_project, missing, run_cli

pytestmark = pytest.mark.slow  # builds the example project (its exports): about a minute


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A copy of the example project (spec, pipeline specs, model sources)."""
    return copy_example_project(tmp_path / "project")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of the project except tritonkit's own cache (a build exports into it)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".tritonkit" not in p.relative_to(root).parts and "__pycache__" not in p.parts}


def test_every_config_parses_into_model_config(project: Path) -> None:
    result = run_cli("build", cwd=project, timeout=900)
    assert result.returncode == 0, result.stderr
    configs = sorted((project / "model_repository").glob("*/config.pbtxt"))
    assert len(configs) >= 5
    for path in configs:
        config = text_format.Parse(path.read_text(), model_config_pb2.ModelConfig())
        assert config.name == path.parent.name
        assert config.backend or config.platform
        assert any(p.is_dir() and p.name.isdigit() for p in path.parent.iterdir())
    assert run_cli("validate", "model_repository", cwd=project).returncode == 0


def test_compose_file_passes_docker_compose_config(project: Path) -> None:
    assert run_cli("build", cwd=project, timeout=900).returncode == 0
    docker_compose = shutil.which("docker-compose")
    if docker_compose is None:
        missing("Debian's docker-compose is not installed (apt-get install docker-compose; .ci/run does)")
    check = subprocess.run([docker_compose, "-f", "docker-compose.yml", "config", "-q"], cwd=project,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_dry_run_writes_nothing_and_lists_the_tree(project: Path) -> None:
    """Not even the export cache: the exported model is listed as pending, its config derived at export time."""
    before = every_path(project)
    result = run_cli("build", "--dry-run", "--json", cwd=project, timeout=900)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["written"] is False and "classify/config.pbtxt" in summary["files"]
    assert summary["pending_exports"] == ["mlp"] and "mlp/config.pbtxt" in summary["files"] and summary["exports"] == {}
    assert every_path(project) == before and not (project / ".tritonkit").exists()
    text = run_cli("build", "--dry-run", cwd=project, timeout=900)
    assert text.returncode == 0, text.stderr
    assert (
        "would export mlp (not run now); mlp/config.pbtxt and its model files are derived at export time" in text.stdout
    )
    assert every_path(project) == before


def test_rebuild_replaces_the_repository_whole(project: Path) -> None:
    assert run_cli("build", cwd=project, timeout=900).returncode == 0
    stray = project / "model_repository" / "stale_model"
    stray.mkdir()
    assert run_cli("build", cwd=project, timeout=900).returncode == 0
    assert not stray.exists()
    leftovers = [p.name for p in project.iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    assert leftovers == []


def test_failed_build_leaves_previous_output_untouched(project: Path) -> None:
    assert run_cli("build", cwd=project, timeout=900).returncode == 0
    before = snapshot(project)
    spec = project / "tritonkit.yaml"
    spec.write_text(spec.read_text().replace("max_batch_size: 8", "max_batch_size: -8", 1))
    result = run_cli("build", cwd=project, timeout=900)
    assert result.returncode == 2
    assert result.stderr.startswith("tritonkit.yaml: models.mlp.max_batch_size: -8 is out of range")
    after = snapshot(project)
    after.pop("tritonkit.yaml")
    before.pop("tritonkit.yaml")
    assert after == before


def test_schema_is_json_schema_with_every_section() -> None:
    result = run_cli("schema")
    assert result.returncode == 0
    schema = json.loads(result.stdout)
    model_fields = schema["$defs"]["ModelSpec"]["properties"]
    for section in ("dynamic_batching", "sequence_batching", "ensemble_scheduling", "model_warmup", "optimization",
                    "instance_group", "version_policy", "model_transaction_policy", "response_cache", "parameters"):
        assert section in model_fields


def test_every_command_has_help_with_an_example() -> None:
    listing = run_cli("--help").stdout
    commands = [line.split()[0] for line in listing.split("Commands:")[1].strip().splitlines()]
    assert {"build", "validate", "schema"} <= set(commands)
    for command in commands:
        text = run_cli(command, "--help").stdout
        assert "Example" in text, command
