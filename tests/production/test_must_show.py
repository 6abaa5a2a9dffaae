"""Green here means green in production: each starter (classifier, bls, llm, asr, tts, image, embed) and the three-stage
TTS example is built, published to S3 (moto), deployed (`tritonkit deploy k8s` and `kserve`), and served by
tritonserver started with exactly the generated container's arguments (`--exit-on-error`, explicit mode, the
`--load-model` list; tests/production/cluster.py adapts only the binary, backend/cache folders, ports and the S3
endpoint): every model ready and `tritonkit smoke` green, once reading the bucket as the Deployment does (Triton
downloads each model into a folder of its own) and once from a local copy of the whole repository, as KServe's
storage initializer gives it. Large files are uploaded once (only small files such as vocab.json are copied).

One build, publish and deploy per case (module-scoped), shared by its two layouts.
"""
from __future__ import annotations

import json
import shutil
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, require, run_cli
from tests.production.cluster import Bytes, bytes_of, container, download, pod, storage_uri
from tests.publish.conftest import s3  # noqa: F401  (the moto S3 server fixture)
from tests.publish.project import BUCKET, FAKE

pytestmark = [pytest.mark.server, pytest.mark.slow]

#: Case -> the starter `tritonkit init --pipeline` writes, or an example folder of this repository.
CASES = {"classifier": "classifier", "bls": "bls", "llm": "llm", "asr": "asr", "tts": "tts", "image": "image",
         "embed": "embed", "tts_three_stage": "examples/tts_tiny"}
#: A pinned custom image (the pipelines' Python packages need one); the pods here run the embedded Triton instead.
IMAGE = "registry.example.com/voice/triton:24.10-tritonkit"
#: Content stored more than once must stay below this: copies are for small files (vocab.json, TLG.fst), not weights.
MAX_REPEATED_BYTES = 1 << 20


@dataclass(frozen=True)
class Published:
    """One case built, published to the bucket under its own prefix and deployed both ways."""

    name: str
    project: Path
    models: list[str]


def _project(root: Path, name: str) -> Path:
    source = CASES[name]
    project = root / name
    if source.startswith("examples/"):
        shutil.copytree(REPO_ROOT / source, project,
                        ignore=shutil.ignore_patterns("__pycache__", "model_repository", ".tritonkit"))
    else:
        done = run_cli("init", str(project), "--pipeline", source)
        assert done.returncode == 0, done.stderr
    return project


@pytest.fixture(scope="module", params=list(CASES))
def published(request: pytest.FixtureRequest, s3: dict[str, str],  # noqa: F811
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[Published]:
    name = request.param
    project = _project(tmp_path_factory.mktemp("production"), name)
    for args in (
        ("build",),
        ("publish", f"s3://{BUCKET}/{name}", "--endpoint-url", s3["endpoint"]),
        ("deploy", "k8s", "--repository", f"s3://{BUCKET}/{name}", "--image", IMAGE),
        ("deploy", "kserve", "--repository", f"s3://{BUCKET}/{name}", "--image", IMAGE),
    ):
        done = run_cli(*args, cwd=project, timeout=900)
        assert done.returncode == 0, f"tritonkit {' '.join(args)}: {done.stderr}"
    models = sorted(p.parent.name for p in (project / "model_repository").glob("*/config.pbtxt"))
    yield Published(name, project, models)


def _all_ready(http: str, models: list[str]) -> None:
    for model in models:
        with urllib.request.urlopen(f"http://{http}/v2/models/{model}/ready", timeout=5) as answer:
            assert answer.status == 200, model


def _smoke(case: Published, http: str, grpc: str) -> None:
    done = run_cli("smoke", "-r", "model_repository", "--url", http, "--grpc-url", grpc, "--json", cwd=case.project,
                   timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    summary = json.loads(done.stdout)
    checked = {r["model"] for r in summary["results"] if r["status"] == "pass"}
    assert summary["ok"] and set(case.models) <= checked, summary


def test_the_deployment_serves_every_model_from_the_bucket_and_smoke_is_green(published: Published, s3: dict[str, str],  # noqa: F811
                                                                                tmp_path: Path) -> None:
    spec = container(published.project / "deploy" / "k8s")
    args = spec["args"]
    assert f"--model-repository=s3://{BUCKET}/{published.name}" in args
    assert "--exit-on-error=true" in args and "--model-control-mode=explicit" in args
    loaded = sorted(a.split("=", 1)[1] for a in args if a.startswith("--load-model="))
    assert loaded == published.models   # the Deployment loads every model the build wrote
    bucket = s3["triton"].rsplit("/", 1)[0]   # s3://HOST:PORT/BUCKET: moto's endpoint in Triton's form
    with pod(spec, f"{bucket}/{published.name}", tmp_path, FAKE) as server:
        _all_ready(server.http, published.models)
        _smoke(published, server.http, server.grpc)


def test_the_kserve_layout_serves_the_downloaded_repository_and_large_files_are_uploaded_once(
        published: Published, s3: dict[str, str], tmp_path: Path) -> None:  # noqa: F811
    boto3 = require("boto3", "pip install 'tritonkit[publish]'")
    folder = published.project / "deploy" / "kserve"
    assert storage_uri(folder) == f"s3://{BUCKET}/{published.name}"
    local = download(boto3.client("s3", endpoint_url=s3["endpoint"]), BUCKET, published.name, tmp_path / "mnt-models")
    sizes: Bytes = bytes_of(local)
    print(f"\nbytes {published.name}: uploaded {sizes.uploaded} unique {sizes.unique} largest repeated "
          f"{sizes.largest_repeat}")
    assert sizes.largest_repeat < MAX_REPEATED_BYTES, sizes
    spec = container(folder)
    assert "--model-repository=/mnt/models" in spec["args"] and "--exit-on-error=true" in spec["args"]
    with pod(spec, str(local), tmp_path, FAKE) as server:
        _all_ready(server.http, published.models)
        _smoke(published, server.http, server.grpc)
