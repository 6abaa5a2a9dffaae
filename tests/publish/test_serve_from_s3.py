"""`tritonkit serve s3://...`: a published repository served by the embedded Triton reading the bucket itself.

Both spellings of a custom endpoint: `s3://BUCKET/PREFIX` with the endpoint in AWS_ENDPOINT_URL (as boto3
takes it; Triton itself reads no endpoint from the environment, so serve hands it Triton's form), and
Triton's own `s3://HOST:PORT/BUCKET/PREFIX` (was mangled to `s3:/HOST...` by a Path round trip).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require
from tests.publish.project import BUCKET, build_version, cli

httpclient = require("tritonclient.http", "pip install tritonclient[http]")

pytestmark = [pytest.mark.server, pytest.mark.slow]


def cache_hits(http: str, metrics: str) -> float:
    """Response-cache hits of `scale` after the same request twice (Triton 2.51's nv_cache_num_hits_per_model)."""
    client = httpclient.InferenceServerClient(http)
    for _ in range(2):
        tensor = httpclient.InferInput("X", [1, 1], "FP32")
        tensor.set_data_from_numpy(np.full((1, 1), 5.0, np.float32))
        client.infer("scale", [tensor])
    client.close()
    text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10).read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("nv_cache_num_hits_per_model{") and 'model="scale"' in line)


def test_serve_a_published_repository_from_s3_in_both_spellings_then_smoke(s3: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "project"
    build_version(project, k=3.0, expected=3.0)
    spec = project / "tritonkit.yaml"  # a response cache: Triton loads the model only with --cache-config
    spec.write_text(spec.read_text().replace("    instance_group:",
                                             "    response_cache: {enable: true}\n    instance_group:", 1))
    assert cli("build", cwd=project).returncode == 0
    published = cli("publish", f"s3://{BUCKET}/served", "--endpoint-url", s3["endpoint"], cwd=project)
    assert published.returncode == 0, published.stderr
    host_port = s3["endpoint"].split("://", 1)[1]
    triton_form = f"s3://{host_port}/{BUCKET}/served"
    plain_env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_ENDPOINT_URL")}
    for url, env in [(f"s3://{BUCKET}/served", {**plain_env, "AWS_ENDPOINT_URL": s3["endpoint"]}),
                     (triton_form, plain_env)]:
        started = subprocess.run([sys.executable, "-m", "tritonkit", "serve", url, "--background", "--json"],
                                 cwd=project,
                                 env=env, capture_output=True, text=True, timeout=240)
        assert started.returncode == 0, started.stderr
        try:
            summary = json.loads(started.stdout)
            assert summary["repository"] == triton_form and summary["serving_repository"] is None
            assert sorted((m["name"], m["state"]) for m in summary["models"]) == [
                ("pipeline", "READY"),
                ("scale", "READY"),
            ]
            smoke = cli("smoke", "-r", "model_repository", cwd=project)  # the project's background server
            assert smoke.returncode == 0, smoke.stdout + smoke.stderr
            assert "pass" in smoke.stdout and "scale" in smoke.stdout
            assert cache_hits(summary["http"], summary["metrics"]) >= 1  # the published config's cache is on
        finally:
            stopped = cli("stop", cwd=project)
        assert stopped.returncode == 0, stopped.stderr


def test_an_s3_prefix_with_nothing_published_is_one_line_at_once_not_a_startup_timeout(s3: dict[str, str],
                                                                                       tmp_path: Path) -> None:
    """Triton logs that it cannot use the repository and runs on serving nothing (--exit-on-error=false): serve
    used to wait out its whole startup timeout."""
    url = f"s3://{s3['endpoint'].split('://', 1)[1]}/{BUCKET}/never-published"
    started = time.monotonic()
    result = cli("serve", url, "--background", "--startup-timeout", "120", cwd=tmp_path)
    assert time.monotonic() - started < 60
    [line] = [ln for ln in result.stderr.splitlines() if not ln.startswith("starting Triton")]
    assert result.returncode == 2 and line.startswith(
        f"{url}: Triton cannot use the model repository: Invalid argument: repository path is not a valid directory; "
        "check that the bucket and prefix exist (tritonkit publish writes them)"), result.stderr
    assert cli("stop", cwd=tmp_path).stdout.startswith("no tritonkit server running"), "nothing left running"



def _publish(repository: Path, model: str, config: str, files: dict[str, bytes], url: str) -> None:
    (repository / model / "1").mkdir(parents=True)
    (repository / model / "config.pbtxt").write_text(config)
    for name, data in files.items():
        (repository / model / "1" / name).write_bytes(data)
    published = cli("publish", url, "-r", str(repository), cwd=repository.parent)
    assert published.returncode == 0, published.stderr


def test_a_published_onnx_model_loads_unchanged_and_answers(s3: dict[str, str], tmp_path: Path) -> None:
    """Triton reads the bucket, so the config cannot be rewritten as a local copy's is: an `onnxruntime` backend
    made of the fallback adapter runs it (was: 'unable to find backend library for backend onnxruntime', so the asr
    starter's acoustic model, and with it the asr ensemble, could not be served from s3://)."""
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Neg", ["X"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["b", 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["b", 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
    url = f"s3://{s3['endpoint'].split('://', 1)[1]}/{BUCKET}/onnx-only"
    _publish(tmp_path / "repo", "neg", 'name: "neg"\nbackend: "onnxruntime"\nmax_batch_size: 4\n'
             'input { name: "X" data_type: TYPE_FP32 dims: [2] }\noutput { name: "Y" data_type: TYPE_FP32 dims: [2] '
             '}\n',
             {"model.onnx": model}, url)
    started = cli("serve", url, "--background", "--json", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    try:
        summary = json.loads(started.stdout)
        assert [(m["name"], m["state"]) for m in summary["models"]] == [("neg", "READY")]
        client = httpclient.InferenceServerClient(summary["http"])
        tensor = httpclient.InferInput("X", [1, 2], "FP32")
        tensor.set_data_from_numpy(np.array([[1.5, -2.0]], np.float32))
        assert client.infer("neg", [tensor]).as_numpy("Y").tolist() == [[-1.5, 2.0]]
        client.close()
    finally:
        assert cli("stop", cwd=tmp_path).returncode == 0


def test_a_published_model_no_backend_here_runs_says_what_to_serve_instead(s3: dict[str, str], tmp_path: Path) -> None:
    """The old advice (name the platform in config.pbtxt so tritonkit runs model.onnx) is for a local repository
    only: a published one runs as published."""
    url = f"s3://{s3['endpoint'].split('://', 1)[1]}/{BUCKET}/plan-only"
    _publish(tmp_path / "repo", "plan", 'name: "plan"\nplatform: "tensorrt_plan"\nmax_batch_size: 4\n'
             'input { name: "X" data_type: TYPE_FP32 dims: [2] }\noutput { name: "Y" data_type: TYPE_FP32 dims: [2] }\n'
             'instance_group { kind: KIND_GPU }\n', {"model.plan": b"not an engine"}, url)
    result = cli("serve", url, "--background", cwd=tmp_path)
    [line] = [ln for ln in result.stderr.splitlines() if not ln.startswith("starting Triton")]
    assert result.returncode == 2 and line.startswith(f"{url}/plan: model 'plan' version 1 failed to load: "), (
        result.stderr
    )
    assert line.endswith("unable to find backend library for backend 'tensorrt', try specifying runtime on the model "
                         "configuration.; a published repository runs as published, and here only Python and ONNX "
                         "Runtime models run: serve the built folder it was published from (`tritonkit serve` runs its "
                         "model.onnx instead), or check it in the Triton container"), line
