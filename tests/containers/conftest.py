"""Container fixtures: the stand-in Triton image (built once per machine), projects built for it, deployments
that `tritonkit up` starts and that are always taken down, with nothing of them left behind.

The stand-in image has the Python backend only, so each deployment mounts the repository `tritonkit serve`
would load (ONNX models as generated onnxruntime fallback models), copied without symlinks, over /models
with a test-only override; the override also sets this machine's ulimits (memlock -1 cannot be applied
here). The generated compose file is used as written; its ports come from the spec (free ports).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import missing, run_cli
from tests.ports import quiet_ports

HERE = Path(__file__).parent
TOOLS = ("podman", "podman-compose", "runc", "debootstrap")
#: Ulimits this machine's hard limits allow (plain numbers: podman-compose cannot merge a number with a mapping).
LIMITS = {"nofile": 1024, "nproc": 1000, "memlock": 65536}


@pytest.fixture(scope="session")
def standin() -> Iterator[str]:
    """The stand-in image's tag; podman uses this project's containers.conf (runc, ulimits) meanwhile."""
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if absent:
        missing(f"the container tests need {', '.join(absent)}: apt-get install podman runc podman-compose debootstrap")
    previous = os.environ.get("CONTAINERS_CONF")
    os.environ["CONTAINERS_CONF"] = str(HERE / "containers.conf")
    try:
        from tritonkit.containers.standin import ensure_image

        started = time.monotonic()
        tag = ensure_image(print)
        print(f"stand-in image {tag} ready in {time.monotonic() - started:.1f} s")
        yield tag
    finally:
        if previous is None:
            os.environ.pop("CONTAINERS_CONF", None)
        else:
            os.environ["CONTAINERS_CONF"] = previous


def set_deploy(spec: Path, **deploy: Any) -> dict[str, int]:
    """Appends a `deploy:` section with free ports (and `deploy`) to a spec that has none; returns the ports."""
    assert "\ndeploy:" not in spec.read_text()
    ports = dict(zip(("http", "grpc", "metrics"), quiet_ports(3)))  # bound minutes later, after image builds
    section = {f"{name}_port": port for name, port in ports.items()} | deploy
    spec.write_text(spec.read_text() + "\n" + yaml.safe_dump({"deploy": section}, default_flow_style=None))
    return ports


def container_repository(project: Path) -> Path:
    """The repository as the embedded server would load it (fallbacks generated), copied without symlinks."""
    from tritonkit.serve.serving import build_serving_repository

    serving = build_serving_repository(project / "model_repository", project / ".tritonkit", gpu=False)
    target = project / "container_repository"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(serving.path, target, symlinks=False, ignore=shutil.ignore_patterns("__pycache__"))
    for path in [target, *target.rglob("*")]:  # the server runs as uid 1000
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


@dataclass
class Deployment:
    """A built project ready for `tritonkit up -f docker-compose.yml -f <override>`."""

    project: Path
    ports: dict[str, int]
    override: Path
    env: dict[str, str]

    @property
    def files(self) -> list[str]:
        return ["-f", "docker-compose.yml", "-f", str(self.override)]

    @property
    def name(self) -> str:
        return f"tk{self.ports['http']}"

    @property
    def http(self) -> str:
        return f"127.0.0.1:{self.ports['http']}"

    @property
    def grpc(self) -> str:
        return f"127.0.0.1:{self.ports['grpc']}"

    def cli(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`tritonkit ARGS` in the project, with podman's settings and the deployment's environment."""
        env = {**os.environ, **self.env}
        return subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=self.project,
                              capture_output=True, text=True, timeout=timeout, env=env)

    def up(self) -> subprocess.CompletedProcess[str]:
        return self.cli("up", *self.files, "-p", self.name, "--engine", "podman-compose", "--timeout", "240")

    def smoke(self) -> subprocess.CompletedProcess[str]:
        return run_cli("smoke", "-r", "model_repository", "--url", self.http, "--grpc-url", self.grpc, "--json",
                       cwd=self.project, timeout=600)

    def leftovers(self) -> list[str]:
        from tritonkit.containers.compose import find_engine, leftovers

        return leftovers(find_engine("podman-compose"), self.name)


@pytest.fixture()
def deploy(standin: str, tmp_path: Path) -> Iterator[Callable[..., Deployment]]:
    """deploy(project, image=None, volumes=None, env={}) -> a Deployment; every one is taken down afterwards
    (also when the test failed), and the test fails if anything of it is left."""
    made: list[Deployment] = []

    def make(project: Path, ports: dict[str, int], *, image: str | None = standin, volumes: list[str] | None = None,
             env: dict[str, str] | None = None) -> Deployment:
        service: dict[str, Any] = {"ulimits": LIMITS,
                                   "volumes": volumes or [f"{container_repository(project)}:/models:ro"]}
        if image is not None:
            service["image"] = image
        override = tmp_path / f"override-{len(made)}.yml"
        override.write_text(yaml.safe_dump({"services": {"triton": service}}))
        deployment = Deployment(project, ports, override, env or {})
        made.append(deployment)
        return deployment

    yield make
    failed, left = [], []
    for deployment in made:  # every one, even when an earlier down failed
        down = deployment.cli("down", *deployment.files, "-p", deployment.name, "--engine", "podman-compose")
        if down.returncode != 0:
            failed.append(down.stderr)
        left += deployment.leftovers()
    assert failed == [] and left == [], f"down failed: {failed}; left behind: {left}"


def build_project(project: Path) -> None:
    result = run_cli("build", cwd=project, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr


def smoke_passed(result: subprocess.CompletedProcess[str], repository: Path) -> dict[str, Any]:
    """The smoke report, checked: exit 0, nothing failed, every model of `repository` passed over HTTP and gRPC."""
    import json

    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report: dict[str, Any] = json.loads(result.stdout)
    assert report["ok"] and not [r for r in report["results"] if r["status"] == "fail"]
    passed = {(r["model"], r["protocol"]) for r in report["results"] if r["status"] == "pass"}
    for model in (p.name for p in repository.iterdir() if (p / "config.pbtxt").is_file()):
        assert {(model, "http"), (model, "grpc")} <= passed, model
    return report
