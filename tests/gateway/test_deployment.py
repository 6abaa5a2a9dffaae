"""The gateway in the generated Kubernetes manifests: a sidecar of each Triton pod (Triton on localhost, the repository
read from the same S3 URL with the same Secret, keys from an optional Secret) and a `gateway` port on the Service;
the manifests pass the offline schema check `tritonkit deploy` runs, and no key value reaches a file."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.deploy.conftest import FAKE_SECRET, S3, containers, deploy, documents, init_and_build

pytestmark = pytest.mark.slow  # init, build and deploy with the gateway through the CLI: tens of seconds each

IMAGE = "registry.example/llm-triton:1.0"   # the Python models need packages beyond the official image


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def edit(spec: dict) -> None:
        spec["gateway"] = {"models": {"smol": {"pipeline": "llm"}}, "port": 9200}

    return init_and_build(tmp_path_factory.mktemp("gw-deploy"), "llm", edit)


def test_k8s_pods_get_the_gateway_sidecar_and_the_service_its_port(project: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRITONKIT_API_KEY", "gateway-key-that-must-not-leak")
    done = deploy(project, "k8s", "--repository", S3, "--s3-secret", "s3-credentials", "--image", IMAGE)
    assert done.returncode == 0, done.stderr
    folder = project / "deploy" / "k8s"
    docs = documents(folder)
    triton, gateway = containers(docs)
    assert (triton["name"], gateway["name"]) == ("triton", "gateway")
    args = gateway["args"]
    assert args[:4] == ["--triton", "127.0.0.1:8001", "--repository", S3] and args[-2:] == ["--model", "smol=llm"]
    key = next(e for e in gateway["env"] if e["name"] == "TRITONKIT_API_KEY")
    assert key["valueFrom"]["secretKeyRef"]["optional"] is True and "value" not in key
    assert gateway["envFrom"] == [{"secretRef": {"name": "s3-credentials"}}]
    assert gateway["securityContext"] == triton["securityContext"]
    assert ({"name": "gateway", "port": 9200, "targetPort": "gateway", "protocol": "TCP"}
            in docs["Service"]["spec"]["ports"])
    text = "".join(p.read_text() for p in folder.glob("*.yaml"))
    assert "gateway-key-that-must-not-leak" not in text and FAKE_SECRET not in text


def test_the_gateway_dockerfile_installs_the_wheel_the_build_put_beside_it(project: Path) -> None:
    """tritonkit is on no package index: the image installs this tritonkit, here an editable checkout's wheel."""
    [wheel] = (project / "tritonkit-wheel").glob("tritonkit-*.whl")
    lines = (project / "tritonkit-gateway.Dockerfile").read_text().splitlines()
    assert f"COPY tritonkit-wheel/{wheel.name} /tmp/" in lines
    assert f"RUN pip install --no-cache-dir '/tmp/{wheel.name}[gateway]' 'tokenizers>=0.19'" in lines
    assert not [p for p in project.iterdir() if p.name.startswith(".tritonkit-wheel-")]   # no staging folder left


def test_kserve_predictors_get_the_sidecar_and_a_gateway_service(project: Path) -> None:
    done = deploy(project, "kserve", "--repository", S3, "--image", IMAGE)
    assert done.returncode == 0, done.stderr
    folder = project / "deploy" / "kserve"
    docs = documents(folder)
    triton, gateway = containers(docs)
    assert (triton["name"], gateway["name"]) == ("kserve-container", "gateway")
    assert gateway["args"][:4] == ["--triton", "127.0.0.1:9000", "--repository", S3]   # KServe's gRPC port for Triton
    service = yaml.safe_load((folder / "gateway-service.yaml").read_text())
    assert service["spec"]["selector"] == {
        "serving.kserve.io/inferenceservice": docs["InferenceService"]["metadata"]["name"],
        "component": "predictor",
    }
    assert service["spec"]["ports"] == [{"name": "gateway", "port": 9200, "targetPort": "gateway", "protocol": "TCP"}]


def test_a_gateway_port_triton_uses_is_one_line(tmp_path: Path) -> None:
    clash = init_and_build(tmp_path, "llm", lambda spec: spec.update(gateway={"port": 9000}))
    assert deploy(clash, "k8s", "--repository", S3, "--image", IMAGE).returncode == 0   # Triton's are 8000-8002 there
    refused = deploy(clash, "kserve", "--repository", S3, "--image", IMAGE)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "gateway.port: port 9000 is one of Triton's in this pod" in refused.stderr


def test_without_a_gateway_section_nothing_changes(tmp_path: Path) -> None:
    plain = init_and_build(tmp_path, "llm")
    assert deploy(plain, "k8s", "--repository", S3, "--image", IMAGE).returncode == 0
    assert [c["name"] for c in containers(documents(plain / "deploy" / "k8s"))] == ["triton"]
    assert "gateway" not in (plain / "docker-compose.yml").read_text()
    assert not (plain / "tritonkit-gateway.Dockerfile").exists() and not (plain / "tritonkit-wheel").exists()
