"""Generates docker-compose.yml that serves the built repository in the official Triton container."""
from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from tritonkit.gateway import deployment as gateway_deployment
from tritonkit.triton.model_graph import with_callees
from tritonkit.triton.server_args import ADMIN_HEADER, COMPOSE, Launch, response_cache_bytes, tritonserver_args

if TYPE_CHECKING:
    from tritonkit.repository.plan import BuildPlan
    from tritonkit.spec.model import DeploySpec
    from tritonkit.spec.project import Project

DOCKERFILE_NAME = "tritonkit.Dockerfile"


def gpu_reservation() -> dict[str, Any]:
    """Compose's NVIDIA GPU reservation (a fresh dict each time, so YAML has no anchors)."""
    return {"resources": {"reservations": {"devices": [{"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}]}}}


def python_requirements(project: Project) -> list[str]:
    """pip packages the Python models need beyond the image, deduplicated in spec order."""
    return list(dict.fromkeys(req for spec in project.models.values() for req in spec.requirements))


def system_packages(project: Project) -> list[str]:
    """Debian packages the Python models need beyond the image (apt-get in the Dockerfile), once each, in spec order."""
    return list(dict.fromkeys(name for spec in project.models.values() for name in spec.system_packages))


def server_command(plan: BuildPlan) -> list[str]:
    """tritonserver's arguments inside the container. The admin key is a `${VAR:?...}` reference: compose substitutes
    it at `docker compose up` and refuses to start without it, so the value never lands in a generated file."""
    deploy = plan.project.deploy
    configs = {name: model.config for name, model in plan.models.items()}
    loads = ["*"] if deploy.load_models is None else with_callees(configs, deploy.load_models)
    env = deploy.admin_key_env
    key = f"${{{env}:?set {env} to the key that model load and unload requests send in the {ADMIN_HEADER} header}}"
    return tritonserver_args(COMPOSE, Launch(
        "/models", {"http": deploy.http_port, "grpc": deploy.grpc_port, "metrics": deploy.metrics_port},
        control=deploy.model_control_mode, loads=loads, admin_key=key, log_verbose=deploy.log_verbose,
        cache_bytes=response_cache_bytes(configs.values(), deploy.cache_size_bytes)))


def published_ports(deploy: DeploySpec) -> list[str]:
    """`host:port:port` entries bound to the spec's address (loopback unless the spec opens it up)."""
    host = f"[{deploy.bind_address}]" if ":" in deploy.bind_address else deploy.bind_address
    return [f"{host}:{p}:{p}" for p in (deploy.http_port, deploy.grpc_port, deploy.metrics_port)]


def deferred_engine_script(plan: BuildPlan) -> str | None:
    """Shell script that builds every deferred TensorRT engine in place, skipping ones newer than their ONNX file."""
    steps = []
    for name, result in plan.exports.items():
        trt = result.tensorrt
        if not trt or trt.get("mode") != "deferred":
            continue
        for version in plan.project.models[name].versions:
            folder = shlex.quote(f"/models/{name}/{version}")
            build = shlex.join(trt["command"])
            steps.append(f"cd {folder} && {{ [ {trt['engine']} -nt {trt['onnx']} ] || {build}; }}")
    return " && ".join(["set -e", *steps]) if steps else None


def compose_document(plan: BuildPlan, repository: Path, compose_path: Path) -> dict[str, Any]:
    """The compose file as data; paths are relative to the compose file's folder."""
    deploy = plan.project.deploy
    mount = os.path.relpath(repository.absolute(), compose_path.absolute().parent)
    service: dict[str, Any] = {
        "image": deploy.image,
        "command": server_command(plan),
        "ports": published_ports(deploy),
        "volumes": [f"./{mount}:/models:ro"],
        "shm_size": deploy.shm_size,
        "ulimits": {"memlock": -1, "stack": 67108864},
        "user": deploy.user,
        "healthcheck": {
            "test": ["CMD", "curl", "-fsS", f"http://localhost:{deploy.http_port}/v2/health/ready"],
            "interval": "10s",
            "timeout": "5s",
            "retries": 30,
            "start_period": "30s",
        },
        "restart": "unless-stopped",
    }
    if python_requirements(plan.project) or system_packages(plan.project):
        service["build"] = {"context": ".", "dockerfile": DOCKERFILE_NAME}
        service["image"] = f"tritonkit-{compose_path.absolute().parent.name.lower() or 'project'}-triton:latest"
    if any(g.kind == "KIND_GPU" for spec in plan.project.models.values() for g in spec.instance_group):
        service["deploy"] = gpu_reservation()
    services: dict[str, Any] = {}
    script = deferred_engine_script(plan)
    if script:
        services["tensorrt-engines"] = {
            "image": deploy.tensorrt_image,
            "command": ["bash", "-c", script],
            "volumes": [f"./{mount}:/models"],
            "user": deploy.user,  # writes engines into the repository: as the server's user, never root
            "deploy": gpu_reservation(),
        }
        service["depends_on"] = {"tensorrt-engines": {"condition": "service_completed_successfully"}}
        service["deploy"] = gpu_reservation()
    services["triton"] = service
    if plan.project.gateway is not None:   # OpenAI-compatible routes beside Triton (tritonkit.gateway.deployment)
        services["gateway"] = gateway_deployment.compose_service(plan.project.gateway, deploy.grpc_port,
                                                                 deploy.bind_address, mount, deploy.user)
    return {"services": services}


def render_compose(plan: BuildPlan, repository: Path, compose_path: Path) -> str:
    """docker-compose.yml text with a header saying where it came from."""
    header = (f"# Generated by tritonkit from {plan.project.spec_path.name}; "
              "`docker compose up` serves the repository.\n")
    deploy = plan.project.deploy
    if deploy.model_control_mode == "explicit":
        header += (f"# Model load/unload requests need header {ADMIN_HEADER} "
                   f"(over gRPC: triton-grpc-protocol-{ADMIN_HEADER}): start it with "
                   f"`{deploy.admin_key_env}=<key> docker compose up` (the key is never stored here).\n")
    return header + yaml.safe_dump(compose_document(plan, repository, compose_path), sort_keys=False)


def render_dockerfile(plan: BuildPlan) -> str | None:
    """A Dockerfile extending the official image with the Python models' packages, or None if not needed.

    System packages come first (the image is Ubuntu; names are validated by the spec, so they need no quoting),
    without recommends and without the apt lists, so the layer holds only what the models load.
    """
    requirements = python_requirements(plan.project)
    packages = system_packages(plan.project)
    if not requirements and not packages:
        return None
    lines = ["# Generated by tritonkit: the official Triton image plus the packages the Python models need.",
             f"FROM {plan.project.deploy.image}"]
    if packages:
        lines.append("RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "
                     f"{' '.join(packages)} && rm -rf /var/lib/apt/lists/*")
    if requirements:
        quoted = " ".join("'" + r.replace("'", "") + "'" for r in requirements)
        lines.append(f"RUN pip install --no-cache-dir {quoted}")
    return "\n".join(lines) + "\n"
