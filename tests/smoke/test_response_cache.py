"""A model with `response_cache` loads on the embedded server (which then enables Triton's local cache)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import tritonclient.http as httpclient

from tests.conftest import run_cli
from tritonkit.package_files import package_path
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server

SPEC = """
models:
  pre:
    backend: python
    max_batch_size: 4
    input: [{name: RAW, data_type: fp32, dims: [4]}]
    output: [{name: FEATURES, data_type: fp32, dims: [4]}]
    response_cache: {enable: true}
    files: {model.py: preprocess.py}
    smoke:
      - inputs: {RAW: [[5.8, 3.0, 3.8, 1.2]]}
        outputs: {FEATURES: [[0, 0, 0, 0]]}
"""


def test_cached_model_serves_and_counts_cache_hits(tmp_path: Path) -> None:
    shutil.copy(package_path("pipelines/classifier/starter/models/preprocess.py"), tmp_path)
    (tmp_path / "tritonkit.yaml").write_text(SPEC)
    assert run_cli("build", cwd=tmp_path).returncode == 0
    with EmbeddedServer(tmp_path / "model_repository", work_dir=tmp_path / ".tritonkit") as server:
        result = run_cli("smoke", "-r", str(tmp_path / "model_repository"), "--url", server.http_url, "--grpc-url",
                         server.grpc_url)
        assert result.returncode == 0, result.stdout
        client = httpclient.InferenceServerClient(server.http_url)
        stats = client.get_inference_statistics("pre")["model_stats"][0]["inference_stats"]
        client.close()
        assert stats["cache_hit"]["count"] >= 1  # smoke sent the same request over HTTP and gRPC
