"""Gateway fixtures: a starter project built and served on the embedded Triton, and `tritonkit gateway` run as a
user runs it (its own process, the real CLI), with the official `openai` client pointed at it."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

from tests.conftest import require, run_cli
from tests.containers.conftest import deploy, standin  # noqa: F401  (podman fixtures, for test_compose_up)
from tests.ports import quiet_ports
from tests.publish.conftest import s3  # noqa: F401  (the moto S3 server fixture, for the gateway reading S3)
from tritonkit.serve.server import EmbeddedServer

require("openai", "pip install openai (the gateway tests use OpenAI's official client)")
require("starlette", "pip install 'tritonkit[gateway]'")


def _merged(spec: dict, changes: dict) -> dict:
    for key, value in changes.items():
        spec[key] = _merged(spec.get(key) or {}, value) if isinstance(value, dict) else value
    return spec


def starter(folder: Path, pipeline: str, changes: dict | None = None) -> Path:
    """`tritonkit init --pipeline PIPELINE` then `tritonkit build`, with `changes` merged into the spec (a
    `gateway:` section, a model's parameters)."""
    result = run_cli("init", str(folder), "--pipeline", pipeline)
    assert result.returncode == 0, result.stderr
    if changes is not None:
        path = folder / "tritonkit.yaml"
        path.write_text(yaml.safe_dump(_merged(yaml.safe_load(path.read_text()), changes), sort_keys=False))
    result = run_cli("build", cwd=folder, timeout=600)
    assert result.returncode == 0, result.stderr
    return folder


@contextmanager
def served(project: Path) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit", startup_timeout=240) as server:
        yield server


@contextmanager
def gateway(project: Path, server: EmbeddedServer, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """`tritonkit gateway` in PROJECT against `server`; yields its base URL (…/v1) once /v1/models answers."""
    [port] = quiet_ports(1)
    log = (project / f"gateway-{port}.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "tritonkit", "gateway", "--triton",
                                server.grpc_url.split("//")[-1],
                                "--port", str(port), *args], cwd=project, stdout=log, stderr=subprocess.STDOUT,
                               env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                headers = {"Authorization": f"Bearer {(env or {}).get('TRITONKIT_API_KEY', '').split(',')[0]}"}
                urllib.request.urlopen(urllib.request.Request(f"{base}/models", headers=headers), timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("gateway did not start: "
                                         f"{(project / f'gateway-{port}.log').read_text()}") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@contextmanager
def smollm2_gateway(folder: Path, model_id: str = "smollm2") -> Iterator[tuple[Path, str, str]]:
    """The SmolLM2 example built in FOLDER (the session's `smollm2_default`) served, and a gateway in front of it
    serving it as MODEL_ID; yields the repository, the gateway's base URL and Triton's metrics address."""
    repository = folder / "model_repository"
    with served(folder) as server, gateway(folder, server, "--repository", str(repository), "--model",
                                           f"{model_id}=llm") as base:
        yield repository, base, server.metrics_url
