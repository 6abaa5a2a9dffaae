"""The generated docker-compose.yml run for real in containers (podman-compose, the stand-in Triton 2.51 image):
`tritonkit up` waits for the container's healthcheck, `tritonkit smoke` passes over the published HTTP and gRPC
ports, `tritonkit down` leaves nothing behind (checked by the `deploy` fixture after every test)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

from tests.conftest import copy_example_project, run_cli
from tests.containers.conftest import build_project, set_deploy, smoke_passed

pytestmark = pytest.mark.server


def test_example_project_comes_up_healthy_and_passes_smoke(deploy, tmp_path: Path) -> None:
    project = copy_example_project(tmp_path / "example")
    ports = set_deploy(project / "tritonkit.yaml")
    build_project(project)
    deployment = deploy(project, ports)
    up = deployment.up()
    assert up.returncode == 0, up.stdout + up.stderr
    assert "healthy" in up.stdout
    report = smoke_passed(deployment.smoke(), project / "model_repository")
    assert report["fallback_models"] == ["mlp"]  # the ONNX model, run by the generated onnxruntime fallback
    down = deployment.cli("down", *deployment.files, "-p", deployment.name, "--engine", "podman-compose")
    assert down.returncode == 0 and deployment.leftovers() == [], down.stderr


def test_explicit_mode_restricts_model_loading_to_the_key(deploy, tmp_path: Path) -> None:
    project = copy_example_project(tmp_path / "explicit")
    ports = set_deploy(project / "tritonkit.yaml", model_control_mode="explicit", load_models=["classify"])
    build_project(project)
    key = "container-test-key"
    assert key not in (project / "docker-compose.yml").read_text()
    without_key = deploy(project, ports).up()
    assert without_key.returncode == 2 and "TRITON_ADMIN_KEY" in without_key.stderr, without_key.stderr
    deployment = deploy(project, ports, env={"TRITON_ADMIN_KEY": key})
    up = deployment.up()
    assert up.returncode == 0, up.stdout + up.stderr
    http = httpclient.InferenceServerClient(deployment.http)
    grpc = grpcclient.InferenceServerClient(deployment.grpc)
    assert not http.is_model_ready("countdown")  # not named by load_models, nor a callee of classify
    for client in (http, grpc):
        with pytest.raises(InferenceServerException, match="admin-key"):
            client.load_model("countdown")
        with pytest.raises(InferenceServerException, match="admin-key"):
            client.load_model("countdown", headers={"admin-key": "wrong"})
    http.load_model("countdown", headers={"admin-key": key})
    assert http.is_model_ready("countdown")
    # Triton prefixes the header of a restricted gRPC protocol: the client sends triton-grpc-protocol-admin-key.
    grpc_key = {"triton-grpc-protocol-admin-key": key}
    grpc.unload_model("countdown", headers=grpc_key)
    grpc.load_model("countdown", headers=grpc_key)
    assert grpc.is_model_ready("countdown")
    for model in sorted(p.parent.name for p in (project / "model_repository").glob("*/config.pbtxt")):  # then all
        if not http.is_model_ready(model):
            http.load_model(model, headers={"admin-key": key})
    smoke_passed(deployment.smoke(), project / "model_repository")


def test_llm_starter_builds_its_dockerfile_and_streams_through_the_container(deploy, standin: str,
                                                                              tmp_path: Path) -> None:
    """The starter's Python models have `requirements:` (tokenizers is not in the base image), so the compose
    runs the image `podman build` makes from the generated tritonkit.Dockerfile (FROM replaced by the stand-in)."""
    from tests.llm import clients
    from tests.llm.reference import tiny_greedy
    from tritonkit.containers.podman import build
    from tritonkit.pipelines.llm.runtime.assets import GenerationConfig
    from tritonkit.pipelines.llm.runtime.text import TextCodec

    project = tmp_path / "llmstarter"
    init = run_cli("init", str(project), "--pipeline", "llm", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    ports = set_deploy(project / "tritonkit.yaml")
    build_project(project)
    dockerfile = project / "tritonkit.Dockerfile"
    assert "tokenizers" in dockerfile.read_text()
    plain = subprocess.run(["podman", "run", "--rm", standin, "python3", "-c", "import tokenizers"],
                           capture_output=True)
    assert plain.returncode != 0  # the stand-in alone could not run the pipeline
    import yaml

    image = yaml.safe_load((project / "docker-compose.yml").read_text())["services"]["triton"]["image"]
    build(project, image, containerfile=dockerfile, base=standin, log=tmp_path / "build.log")
    try:
        deployment = deploy(project, ports, image=None)
        up = deployment.up()
        assert up.returncode == 0, up.stdout + up.stderr
        smoke_passed(deployment.smoke(), project / "model_repository")
        decoder = project / "model_repository" / "generate" / "1"
        codec = TextCodec(decoder / "tokenizer.json")
        want = tiny_greedy(list(codec.encode("Hello")), 12, frozenset(GenerationConfig.load(decoder).eos_token_ids))
        body = {"text_input": "Hello", "max_tokens": 12}
        for result in (clients.http(deployment.http, "llm", body, stream=True),
                       clients.grpc_stream(deployment.grpc, "llm", body)):
            assert result.error == "" and result.ids == want
            assert len(result.tokens) > 1 and [t for step in result.tokens for t in step] == want   # streamed
            assert result.text == codec.decode(result.ids)
    finally:
        subprocess.run(["podman", "rmi", "-f", image], capture_output=True)
