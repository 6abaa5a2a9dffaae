"""The readiness probe the Deployment declares, asked of tritonserver run with the Deployment's own arguments (the
production harness, tests/production/cluster.py): ready once the startup models are in, and still ready while
another model loads (a rollout's new version), which Triton's strict readiness would answer 503 to."""
from __future__ import annotations

import shutil
import textwrap
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import require
from tests.deploy.conftest import S3, containers, deploy, documents
from tests.production.cluster import pod

pytestmark = [pytest.mark.server, pytest.mark.slow]
require("kubernetes_validate", "pip install tritonkit[deploy]")
require("pytriton", "the embedded server")

SLOW_MODEL = '''
import time

class TritonPythonModel:
    def initialize(self, args):
        time.sleep(4)   # a model that takes a while to load, as a large new version does

    def execute(self, requests):
        return []
'''


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_the_readiness_probe_stays_ready_while_another_model_loads(classifier: Path, tmp_path: Path) -> None:
    done = deploy(classifier, "k8s", "--repository", S3)
    assert done.returncode == 0, done.stderr
    spec = containers(documents(classifier / "deploy" / "k8s"))[0]
    probe = spec["readinessProbe"]["httpGet"]
    repository = tmp_path / "repository"
    shutil.copytree(classifier / "model_repository", repository)
    slow = repository / "slow"
    (slow / "1").mkdir(parents=True)
    (slow / "1" / "model.py").write_text(SLOW_MODEL)
    (slow / "config.pbtxt").write_text(textwrap.dedent("""\
        name: "slow"
        backend: "python"
        max_batch_size: 0
        input [{ name: "X" data_type: TYPE_FP32 dims: [1] }]
        output [{ name: "Y" data_type: TYPE_FP32 dims: [1] }]
        """))
    with pod(spec, str(repository), tmp_path, {}) as server:
        ready = f"http://{server.http}{probe['path']}"
        assert probe["port"] == 8000 and _status(ready) == 200
        [key] = [a.rsplit("=", 1)[1] for a in server.args if a.startswith("--http-restricted-api=")]
        load = urllib.request.Request(f"http://{server.http}/v2/repository/models/slow/load", data=b"{}",
                                      headers={"admin-key": key}, method="POST")
        loading = threading.Thread(target=lambda: urllib.request.urlopen(load, timeout=60).read())
        loading.start()
        seen = []
        while loading.is_alive():
            seen.append(_status(ready))
            time.sleep(0.2)
        loading.join()
        assert _status(f"http://{server.http}/v2/models/slow/ready") == 200 and len(seen) > 5
        assert set(seen) == {200}, seen
