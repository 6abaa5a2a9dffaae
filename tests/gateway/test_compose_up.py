"""The generated compose file with its gateway service run for real (podman-compose, as tests/containers runs it):
the official openai client gets a chat answer through the gateway container, which reaches the Triton container by
its service name. Images: the Triton stand-in (tests/containers) plus the LLM's tokenizers, and the gateway image
built from the generated tritonkit-gateway.Dockerfile as it is (its FROM replaced by the stand-in), which installs the
wheel the build put beside it; both are tagged as the compose file names them."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import openai
import pytest
import yaml

from tests.conftest import run_cli
from tests.containers.conftest import build_project, set_deploy
from tests.ports import quiet_ports
from tritonkit.containers.podman import build

pytestmark = [pytest.mark.server, pytest.mark.slow]


def _image(tag: str, containerfile: str, context: Path) -> None:
    (context / "Containerfile").write_text(containerfile)
    build(context, tag, containerfile=context / "Containerfile", log=context / "build.log")


def test_compose_up_answers_through_the_gateway_container(standin, deploy, tmp_path: Path) -> None:
    project = tmp_path / "llm"
    assert run_cli("init", str(project), "--pipeline", "llm").returncode == 0
    spec = project / "tritonkit.yaml"
    ports = set_deploy(spec)
    gateway_port = next(p for p in quiet_ports(4) if p not in ports.values())
    spec.write_text(spec.read_text() + yaml.safe_dump({"gateway": {"port": gateway_port}}))
    build_project(project)
    compose = yaml.safe_load((project / "docker-compose.yml").read_text())
    gateway = compose["services"]["gateway"]
    assert "COPY tritonkit-wheel/tritonkit-" in (project / gateway["build"]["dockerfile"]).read_text()
    build(project, gateway["image"], containerfile=project / gateway["build"]["dockerfile"], base=standin,
          log=tmp_path / "gateway-image.log")
    triton_context = tmp_path / "triton-image"
    triton_context.mkdir()
    triton_image = "localhost/tritonkit-test-llm-triton:1"
    _image(triton_image, f"FROM {standin}\nRUN pip install --no-cache-dir 'tokenizers>=0.19'\n", triton_context)
    deployment = deploy(project, ports, image=triton_image)
    # the gateway reads the copy Triton gets (uid 1000 can read it; the build's is 0700)
    override = yaml.safe_load(deployment.override.read_text())
    override["services"]["gateway"] = {"volumes": override["services"]["triton"]["volumes"]}
    deployment.override.write_text(yaml.safe_dump(override))
    up = deployment.up()
    assert up.returncode == 0, up.stdout + up.stderr
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{gateway_port}/v1", api_key="unused", max_retries=0)
    deadline = time.monotonic() + 120
    while True:
        try:
            reply = client.chat.completions.create(
                model="llm", messages=[{"role": "user", "content": "Hello"}], max_tokens=4
            )
            break
        except (openai.APIConnectionError, openai.NotFoundError):   # the gateway starting, or Triton not ready yet
            assert time.monotonic() < deadline, "no answer through the gateway container"
            time.sleep(1)
        except openai.APIStatusError as exc:
            logs = subprocess.run(["podman", "logs", f"{deployment.name}_gateway_1"], capture_output=True, text=True)
            raise AssertionError(f"{exc.body}\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}") from None
    assert reply.usage.completion_tokens == 4 and reply.choices[0].finish_reason == "length"
