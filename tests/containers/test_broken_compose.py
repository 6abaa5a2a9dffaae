"""Compose deployments broken on purpose: `tritonkit up` names the cause in one line, exits 2, and leaves no
container, network or volume behind (the `deploy` fixture checks after each test)."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import copy_example_project
from tests.containers.conftest import build_project, set_deploy

pytestmark = pytest.mark.server

BROKEN_MODEL = '''\
class TritonPythonModel:
    def initialize(self, args):
        raise RuntimeError("weights file missing on purpose")

    def execute(self, requests):
        return []
'''


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    project = copy_example_project(tmp_path_factory.mktemp("broken") / "example")
    ports = set_deploy(project / "tritonkit.yaml")
    build_project(project)
    return project, ports


def test_missing_mount_source_is_named(deploy, example) -> None:
    project, ports = example
    deployment = deploy(project, ports, volumes=[f"{project / 'no_such_repository'}:/models:ro"])
    up = deployment.up()
    assert up.returncode == 2, up.stdout + up.stderr
    assert f"services.triton.volumes: mount source {project / 'no_such_repository'} does not exist" in up.stderr
    assert not (project / "no_such_repository").exists()  # compose would have created it, empty
    assert deployment.leftovers() == []


def test_port_clash_is_named(deploy, example) -> None:
    project, ports = example
    deployment = deploy(project, ports)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", ports["grpc"]))
        taken.listen()
        up = deployment.up()
    assert up.returncode == 2, up.stdout + up.stderr
    assert f"ports: port {ports['grpc']} on 127.0.0.1 is already in use" in up.stderr
    assert deployment.leftovers() == []


def test_model_failing_to_load_stops_the_server_and_is_named(deploy, tmp_path: Path) -> None:
    project = tmp_path / "brokenmodel"
    project.mkdir()
    (project / "broken.py").write_text(BROKEN_MODEL)
    (project / "tritonkit.yaml").write_text(
        "version: 1\nmodels:\n  broken:\n    backend: python\n    max_batch_size: 0\n"
        "    input: [{name: X, data_type: TYPE_INT32, dims: [1]}]\n"
        "    output: [{name: Y, data_type: TYPE_INT32, dims: [1]}]\n"
        "    files: {model.py: broken.py}\n")
    ports = set_deploy(project / "tritonkit.yaml")
    build_project(project)
    assert "--exit-on-error=true" in (project / "docker-compose.yml").read_text()
    deployment = deploy(project, ports)
    up = deployment.up()
    assert up.returncode == 2, up.stdout + up.stderr
    assert "model 'broken' failed to load: " in up.stderr and "weights file missing on purpose" in up.stderr
    assert (project / ".tritonkit" / "logs" / "compose").is_dir()
    assert deployment.leftovers() == []


def test_an_image_that_cannot_be_pulled_is_named_with_the_engine_s_error(deploy, example) -> None:
    project, ports = example
    image = "127.0.0.1:1/tritonkit/no-such-image:1"   # a registry nothing answers at
    deployment = deploy(project, ports, image=image)
    up = deployment.up()
    assert up.returncode == 2, up.stdout + up.stderr
    [line] = [line for line in up.stderr.splitlines() if "podman-compose" in line and image in line]
    assert "error" in line.lower() and "container log named above" not in up.stderr, up.stderr
    assert deployment.leftovers() == []
