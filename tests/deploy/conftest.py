"""Helpers for the deploy tests: a starter built into a temporary folder, the real `tritonkit deploy` CLI, and
readers of what it wrote."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import run_cli

S3 = "s3://models-bucket/prod"
FAKE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzzFAKESECRET"
FAKE_ADMIN_KEY = "admin-key-value-that-must-not-leak-4711"
PROMETHEUS_OPERATED = "http://prometheus-operated.monitoring.svc:9090"


def init_and_build(root: Path, pipeline: str, edit: Any = None) -> Path:
    project = root / pipeline
    assert run_cli("init", "--pipeline", pipeline, str(project)).returncode == 0
    if edit is not None:
        spec = project / "tritonkit.yaml"
        data = yaml.safe_load(spec.read_text())
        edit(data)
        spec.write_text(yaml.safe_dump(data, sort_keys=False))
    built = run_cli("build", cwd=project)
    assert built.returncode == 0, built.stderr
    return project


def deploy(project: Path, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI, with a fake AWS secret and admin key in its environment (neither may reach a file)."""
    env = {**os.environ, "AWS_SECRET_ACCESS_KEY": FAKE_SECRET, "AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKE",
           "TRITON_ADMIN_KEY": FAKE_ADMIN_KEY}
    return subprocess.run([sys.executable, "-m", "tritonkit", "deploy", target, *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)


def documents(folder: Path) -> dict[str, Any]:
    """kind -> the object, for every file in `folder` that holds a Kubernetes object."""
    out = {}
    for path in sorted(folder.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and "kind" in doc:
                out[doc["kind"]] = doc
    return out


def containers(docs: dict[str, Any]) -> list[dict[str, Any]]:
    if "Deployment" in docs:
        return docs["Deployment"]["spec"]["template"]["spec"]["containers"]
    return docs["ServingRuntime"]["spec"]["containers"]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return init_and_build(tmp_path_factory.mktemp("deploy"), "classifier")
