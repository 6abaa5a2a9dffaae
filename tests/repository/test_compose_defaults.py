"""docker-compose.yml is safe by default: loopback ports, a keyed model-repository API in explicit mode."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.cli_contract import assert_one_line_errors, run_in_process, snapshot
from tests.conftest import missing

MODEL = ('"""Echo model for the compose tests."""\n\n\nclass TritonPythonModel:\n    def execute(self, requests):\n    '
         '    return []\n')
SECRET = "do-not-write-me-4711"


def write_project(root: Path, deploy: dict[str, Any]) -> Path:
    """A one-model project with the given deploy section."""
    (root / "models").mkdir(parents=True)
    (root / "models" / "echo.py").write_text(MODEL)
    spec = {
        "version": 1,
        "deploy": deploy,
        "models": {"echo": {
            "backend": "python", "max_batch_size": 4,
            "input": [{"name": "X", "data_type": "fp32", "dims": [2]}],
            "output": [{"name": "Y", "data_type": "fp32", "dims": [2]}],
            "files": {"model.py": "models/echo.py"},
        }},
    }
    (root / "tritonkit.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return root


def build_compose(root: Path, deploy: dict[str, Any]) -> dict[str, Any]:
    write_project(root, deploy)
    outcome = run_in_process(["build"], root)
    assert outcome.exit_code == 0, outcome.stderr
    return yaml.safe_load((root / "docker-compose.yml").read_text())


def docker_compose(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Debian's docker-compose on the generated file (it checks the schema and interpolation without Docker)."""
    binary = shutil.which("docker-compose")
    if binary is None:
        missing("Debian's docker-compose is not installed (apt-get install docker-compose)")
    clean = {k: v for k, v in os.environ.items() if k != "TRITON_ADMIN_KEY"}
    return subprocess.run([binary, "-f", "docker-compose.yml", *args], cwd=root, capture_output=True, text=True,
                          env={**clean, **(env or {})}, timeout=60)


def host_of(port: str) -> str:
    """The host part of a compose `host:published:target` entry (IPv6 in brackets)."""
    return port.rsplit(":", 2)[0]


@pytest.mark.slow  # builds through the CLI: seconds each
def test_every_published_port_binds_loopback_by_default(tmp_path: Path) -> None:
    compose = build_compose(tmp_path, {})
    ports = [p for service in compose["services"].values() for p in service.get("ports", [])]
    assert len(ports) == 3
    assert all(host_of(p) == "127.0.0.1" for p in ports), ports
    assert docker_compose(tmp_path, "config", "-q").returncode == 0


@pytest.mark.slow  # builds through the CLI: seconds each
@pytest.mark.parametrize(("address", "host"), [("0.0.0.0", "0.0.0.0"), ("10.1.2.3", "10.1.2.3"), ("::1", "[::1]")])
def test_a_configured_bind_address_is_honoured(tmp_path: Path, address: str, host: str) -> None:
    compose = build_compose(tmp_path, {"bind_address": address, "http_port": 9000})
    ports = compose["services"]["triton"]["ports"]
    assert ports[0] == f"{host}:9000:9000" and all(host_of(p) == host for p in ports)
    check = docker_compose(tmp_path, "config", "-q")
    assert check.returncode == 0, check.stderr


@pytest.mark.slow  # builds through the CLI: seconds each
def test_explicit_mode_keys_the_model_repository_api_from_the_environment(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_ADMIN_KEY", SECRET)  # set while building: it must still not reach any file
    compose = build_compose(tmp_path, {"model_control_mode": "explicit"})
    command = compose["services"]["triton"]["command"]
    reference = "${TRITON_ADMIN_KEY:?"
    http = [a for a in command if a.startswith("--http-restricted-api=model-repository:admin-key=")]
    grpc = [a for a in command if a.startswith("--grpc-restricted-protocol=model-repository:admin-key=")]
    assert len(http) == len(grpc) == 1 and reference in http[0] and reference in grpc[0]
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert not [p for p in written if SECRET.encode() in p.read_bytes()]

    monkeypatch.delenv("TRITON_ADMIN_KEY")
    refused = docker_compose(tmp_path, "config", "-q")
    assert refused.returncode != 0 and "TRITON_ADMIN_KEY" in refused.stderr  # compose will not start without a key
    accepted = docker_compose(tmp_path, "config", env={"TRITON_ADMIN_KEY": SECRET})
    assert accepted.returncode == 0, accepted.stderr
    assert f"--http-restricted-api=model-repository:admin-key={SECRET}" in accepted.stdout
    assert f"--grpc-restricted-protocol=model-repository:admin-key={SECRET}" in accepted.stdout


def test_the_key_variable_is_configurable(tmp_path: Path) -> None:
    compose = build_compose(tmp_path, {"model_control_mode": "explicit", "admin_key_env": "MY_KEY"})
    assert any("${MY_KEY:?" in a for a in compose["services"]["triton"]["command"])
    assert not any("TRITON_ADMIN_KEY" in a for a in compose["services"]["triton"]["command"])


def test_other_modes_have_no_restricted_flags(tmp_path: Path) -> None:
    command = build_compose(tmp_path, {"model_control_mode": "poll"})["services"]["triton"]["command"]
    assert not [a for a in command if "restricted" in a]


@pytest.mark.parametrize(("deploy", "field", "text"), [
    ({"bind_address": "localhost"}, "deploy.bind_address", "is not an IP address"),
    ({"model_control_mode": "explicit", "admin_key_env": "A-B"}, "deploy.admin_key_env", "A-B"),
])
def test_bad_deploy_values_are_refused(tmp_path: Path, deploy: dict[str, Any], field: str, text: str) -> None:
    write_project(tmp_path, deploy)
    before = snapshot(tmp_path)
    lines = assert_one_line_errors(run_in_process(["build"], tmp_path), f"tritonkit.yaml: {field}: ")
    assert text in lines[0]
    assert snapshot(tmp_path) == before
