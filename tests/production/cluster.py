"""What a cluster does with tritonkit's output, done here: the pod's tritonserver command line taken from a generated
Deployment or KServe ServingRuntime, run on the embedded Triton 2.51; KServe's storage initializer (the repository
downloaded whole to a local folder); and the bytes a publish put in the bucket.

The container's arguments are used as written. Only what differs between the official image and the embedded
runtime is adapted: the binary's location, `--backend-directory` / `--cache-directory` (the image has them at
/opt/tritonserver), the ports (free loopback ports instead of 8000-8002 on every interface) and the s3 endpoint
(moto's `s3://HOST:PORT/...` form, where a cluster reaches AWS). Kubernetes expands `$(VAR)` in arguments from the
container's environment; that is done here with a generated admin key.

The image has an onnxruntime backend and the embedded runtime does not: the backend directory gets a stand-in
`onnxruntime` backend, a Python-based backend (Triton loads `backends/<name>/model.py` for `backend: "<name>"`)
made of tritonkit's ONNX fallback adapter, so an exported model's config loads unchanged.
"""
from __future__ import annotations

import hashlib
import re
import secrets
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tritonkit.serve.fallback import ADAPTER, RUNNER, RUNNER_MODULE_FILE
from tritonkit.serve.ports import choose_ports
from tritonkit.serve.process import terminate
from tritonkit.serve.runtime import prepare_runtime

LOOPBACK = "127.0.0.1"
#: Arguments of the container's command line that name the image's own layout or listening sockets.
ADAPTED = ("--http-port=", "--grpc-port=", "--metrics-port=", "--backend-directory=", "--cache-directory=")


def container(folder: Path) -> dict[str, Any]:
    """The Triton container of the Deployment (k8s) or ServingRuntime (KServe) written into `folder`."""
    for path in sorted(folder.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "Deployment":
                return doc["spec"]["template"]["spec"]["containers"][0]
            if isinstance(doc, dict) and doc.get("kind") == "ServingRuntime":
                return doc["spec"]["containers"][0]
    raise AssertionError(f"no Deployment or ServingRuntime in {folder}")


def storage_uri(folder: Path) -> str:
    """The InferenceService's storageUri: what KServe's storage initializer downloads to /mnt/models."""
    for doc in yaml.safe_load_all((folder / "inferenceservice.yaml").read_text()):
        if isinstance(doc, dict) and doc.get("kind") == "InferenceService":
            return doc["spec"]["predictor"]["model"]["storageUri"]
    raise AssertionError(f"no InferenceService in {folder}")


def stand_in_backends(work: Path) -> Path:
    """The embedded runtime's backends plus a Python-based `onnxruntime` backend (tritonkit's ONNX adapter)."""
    runtime = prepare_runtime()
    backends = work / "backends"
    if not backends.is_dir():
        shutil.copytree(runtime.backends, backends, symlinks=True)
        (backends / "onnxruntime").mkdir()
        shutil.copy(ADAPTER, backends / "onnxruntime" / "model.py")
        shutil.copy(RUNNER, backends / "onnxruntime" / RUNNER_MODULE_FILE)
    return backends


@dataclass(frozen=True)
class Pod:
    """A running tritonserver started with a container's arguments, and where it answers."""

    args: list[str]
    http: str
    grpc: str
    log: Path


def pod_command(spec: dict[str, Any], backends: Path, repository: str, ports: dict[str, int],
                env: dict[str, str]) -> list[str]:
    """The container's `args` with only the runtime's layout, ports and repository endpoint adapted (see module doc)."""
    runtime = prepare_runtime()
    args = list(spec.get("command", [])) + list(spec["args"])
    assert args[0] == "tritonserver", args
    kept = [a for a in args[1:] if not a.startswith(ADAPTED)]
    kept = [f"--model-repository={repository}" if a.startswith("--model-repository=") else a for a in kept]
    kept = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in kept]   # Kubernetes' $(VAR) expansion
    return [str(runtime.tritonserver), *kept, f"--backend-directory={backends}", f"--cache-directory={runtime.caches}",
            f"--http-address={LOOPBACK}", f"--grpc-address={LOOPBACK}", f"--metrics-address={LOOPBACK}",
            f"--http-port={ports['http']}", f"--grpc-port={ports['grpc']}", f"--metrics-port={ports['metrics']}"]


def container_env(spec: dict[str, Any]) -> dict[str, str]:
    """The container's environment as the pod gets it: plain values, and a generated value for each secret."""
    return {e["name"]: e["value"] if "value" in e else secrets.token_hex(16) for e in spec.get("env", [])}


@contextmanager
def pod(spec: dict[str, Any], repository: str, work: Path, extra_env: dict[str, str],
        timeout: float = 240) -> Iterator[Pod]:
    """tritonserver with the container's arguments, until every model is ready (it exits on any load error)."""
    runtime = prepare_runtime()
    ports = choose_ports(LOOPBACK, {"http": None, "grpc": None, "metrics": None})
    env = container_env(spec)
    args = pod_command(spec, stand_in_backends(work), repository, ports, env)
    log = work / f"tritonserver-{ports['http']}.log"
    with log.open("w") as out:
        proc = subprocess.Popen(args, env={**runtime.env, **extra_env, **env, "HOME": str(work)}, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    http = f"{LOOPBACK}:{ports['http']}"
    try:
        _wait_ready(proc, http, log, timeout)
        yield Pod(args, http, f"{LOOPBACK}:{ports['grpc']}", log)
    finally:
        terminate(proc.pid, pgid=proc.pid, proc=proc)


def _wait_ready(proc: subprocess.Popen, http: str, log: Path, timeout: float) -> None:
    """Until the server says ready (every model it was told to load is), or fail with the log's end."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(
                f"tritonserver exited with {proc.returncode}:\n" + "\n".join(log.read_text().splitlines()[-30:])
            )
        try:
            with urllib.request.urlopen(f"http://{http}/v2/health/ready", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"tritonserver not ready after {timeout} s:\n" + "\n".join(log.read_text().splitlines()[-30:]))


def download(client: Any, bucket: str, prefix: str, dest: Path) -> Path:
    """Every object under `prefix` into `dest`, as KServe's storage initializer copies a repository (folder
    markers, keys ending in '/', become folders: an ensemble's empty version folder)."""
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix.rstrip("/") + "/"):
        for item in page.get("Contents", []):
            rel = item["Key"][len(prefix.rstrip("/")) + 1:]
            target = dest / rel
            if item["Key"].endswith("/"):
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            client.download_file(bucket, item["Key"], str(target))
    return dest


@dataclass(frozen=True)
class Bytes:
    """What a publish put in the bucket: all bytes, bytes of distinct content, and the largest content stored twice."""

    uploaded: int
    unique: int
    largest_repeat: int


def bytes_of(folder: Path) -> Bytes:
    """Sizes over the files of a downloaded repository (the bucket's objects, one file each)."""
    seen: dict[str, list[int]] = {}
    for path in folder.rglob("*"):
        if path.is_file():
            seen.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), []).append(path.stat().st_size)
    uploaded = sum(sum(sizes) for sizes in seen.values())
    unique = sum(sizes[0] for sizes in seen.values())
    repeated = [sizes[0] for sizes in seen.values() if len(sizes) > 1]
    return Bytes(uploaded, unique, max(repeated, default=0))
