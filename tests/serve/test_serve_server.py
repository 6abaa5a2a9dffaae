"""The embedded Triton server for real: inference, fallbacks, load failures, ports, death, stop, perf."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from tests.conftest import require
from tests.ports import quiet_ports
from tritonkit.errors import TritonkitError
from tritonkit.serve import process
from tritonkit.serve.ports import is_listening
from tritonkit.serve.server import EmbeddedServer

require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
require("onnx", "pip install 'tritonkit[export]'")
ort = require("onnxruntime", "pip install 'tritonkit[serve]'")

pytestmark = pytest.mark.server

BROKEN_MODEL = '''
def load_weights():
    raise FileNotFoundError("weights.bin is missing")

class TritonPythonModel:
    def initialize(self, args):
        load_weights()
'''


def group_alive(pgid: int) -> bool:
    """Whether any process of the server's group (server or Python stubs) is still running."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = process.proc_stat(int(entry.name))
            if stat is not None and stat.pgid == pgid and stat.state != "Z":
                return True
    return False


def infer_http(url: str, model: str, x: np.ndarray) -> np.ndarray:
    client = httpclient.InferenceServerClient(url)
    try:
        inp = httpclient.InferInput("X", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        return client.infer(model, [inp]).as_numpy("Y")
    finally:
        client.close()


# -- the shared server ---------------------------------------------------------------------------------
def test_a_python_model_answers_over_http_and_grpc(served: EmbeddedServer) -> None:
    assert {m.name for m in served.models} == {"double", "linear", "linear_trt"}
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(infer_http(served.http_url, "double", x), x * 2)
    client = grpcclient.InferenceServerClient(served.grpc_url)
    try:
        assert client.is_model_ready("double")
        inp = grpcclient.InferInput("X", [2, 4], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_array_equal(client.infer("double", [inp]).as_numpy("Y"), x * 2)
    finally:
        client.close()


@pytest.mark.parametrize("model", ["linear", "linear_trt"])
def test_onnx_fallback_matches_onnxruntime_and_batches_requests(served: EmbeddedServer, model: str) -> None:
    assert {f.name: f.kind for f in served.serving.fallbacks} == {"linear": "onnxruntime_onnx",
                                                                   "linear_trt": "tensorrt_plan"}
    onnx_file = served.repository / model / "1" / "model.onnx"
    reference = ort.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((1 + i % 3, 4)).astype(np.float32) for i in range(8)]
    outputs: list[np.ndarray | None] = [None] * len(inputs)
    barrier = threading.Barrier(len(inputs))

    def call(i: int) -> None:
        barrier.wait()  # all eight requests reach the 100 ms batching window together
        outputs[i] = infer_http(served.http_url, model, inputs[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for x, y in zip(inputs, outputs):
        np.testing.assert_allclose(y, reference.run(["Y"], {"X": x})[0], rtol=1e-5, atol=1e-6)

    client = httpclient.InferenceServerClient(served.http_url)
    try:
        stats = client.get_inference_statistics(model)["model_stats"][0]
    finally:
        client.close()
    assert stats["inference_count"] == sum(len(x) for x in inputs)
    assert stats["execution_count"] < len(inputs), stats  # several requests ran as one onnxruntime call
    assert max(int(b["batch_size"]) for b in stats["batch_stats"]) > 3


def test_a_taken_port_fails_fast_with_the_port_named(served: EmbeddedServer, tmp_path: Path) -> None:
    taken = served.ports["http"]
    started = time.monotonic()
    with pytest.raises(TritonkitError) as info:
        EmbeddedServer(served.repository, http_port=taken, work_dir=tmp_path).start()
    assert time.monotonic() - started < 5
    assert info.value.field == "--http-port" and f"port {taken} is already in use on 127.0.0.1" in info.value.line()


def test_a_port_taken_while_models_load_is_named(tmp_path: Path, write_python_model) -> None:
    """The race our early check cannot see: the port is taken after it, before Triton binds it."""
    write_python_model(tmp_path / "repo", "double")
    squatter = socket.socket()

    def take_grpc_port(progress: object) -> None:
        if squatter.fileno() != -1 and not squatter.getsockname()[1]:
            squatter.bind(("127.0.0.1", server.ports["grpc"]))
            squatter.listen()

    server = EmbeddedServer(tmp_path / "repo", work_dir=tmp_path / ".tritonkit", progress=take_grpc_port)
    try:
        with pytest.raises(TritonkitError) as info:
            server.start()
    finally:
        squatter.close()
    assert info.value.field == "--grpc-port"
    assert f"port {server.ports['grpc']} is already in use on 127.0.0.1" in info.value.line()
    assert server.proc.poll() is not None


# -- servers of their own --------------------------------------------------------------------------------
def test_load_failures_are_named_with_tritons_reason(tmp_path: Path, cli, write_python_model,
                                                     write_onnx_model, build_onnx) -> None:
    repo = tmp_path / "model_repository"
    write_python_model(repo, "good")
    write_python_model(repo, "broken", BROKEN_MODEL)
    write_onnx_model(repo, "ok_onnx")
    (repo / "no_versions").mkdir()
    (repo / "no_versions" / "config.pbtxt").write_text('backend: "python"\nmax_batch_size: 0\n')
    build_onnx(repo / "onnx_without_config" / "1" / "model.onnx")  # Triton guesses onnxruntime: not here
    http, grpc, metrics = quiet_ports(3)
    result = cli("serve", "--http-port", str(http), "--grpc-port", str(grpc), "--metrics-port", str(metrics),
                 cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if "failed to load" in ln]
    assert len(errors) == 3, result.stderr
    assert any("model 'broken' version 1 failed to load: Internal: FileNotFoundError: weights.bin is missing "
               "(at model_repository/broken/1/model.py(3): load_weights)" in ln for ln in errors), errors
    assert any("model 'no_versions' failed to load: at least one version must be available" in ln for ln in errors)
    assert any("'onnx_without_config' version 1 failed to load: Invalid argument: unable to find backend library "
               "for backend 'onnxruntime'" in ln and "name the platform in config.pbtxt" in ln for ln in errors)
    assert not any(is_listening("127.0.0.1", p) for p in (http, grpc, metrics))
    assert not (tmp_path / ".tritonkit" / "server.json").exists()


def test_an_ensemble_over_a_failed_model_names_that_model_not_no_reason(tmp_path: Path, cli,
                                                                          write_python_model) -> None:
    repo = tmp_path / "model_repository"
    write_python_model(repo, "broken", BROKEN_MODEL)
    (repo / "pipeline" / "1").mkdir(parents=True)
    (repo / "pipeline" / "config.pbtxt").write_text(
        'name: "pipeline"\nplatform: "ensemble"\nmax_batch_size: 8\n'
        'input [{ name: "X" data_type: TYPE_FP32 dims: [4] }]\noutput [{ name: "Y" data_type: TYPE_FP32 dims: [4] }]\n'
        'ensemble_scheduling { step [{ model_name: "broken" model_version: -1 '
        'input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } }] }\n')
    result = cli("serve", "--background", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    errors = [ln for ln in result.stderr.splitlines() if "failed to load" in ln]
    assert errors == [
        "model_repository/broken: model 'broken' version 1 failed to load: Internal: FileNotFoundError: weights.bin is "
        "missing (at model_repository/broken/1/model.py(3): load_weights); fix the model and serve again (full server "
        f"log: {errors[0].rsplit('log: ', 1)[1]}",
        "model_repository/pipeline: model 'pipeline' failed to load: depends on 'broken' which has no loaded version; "
        "fix model 'broken' (its own line says why it failed) and serve again"], result.stderr
    assert not (tmp_path / ".tritonkit" / "server.json").exists()


@pytest.mark.skipif(Path("/dev/nvidia0").exists(), reason="a GPU is here, so KIND_GPU loads")
def test_a_kind_gpu_instance_group_on_a_cpu_only_machine_says_to_use_kind_cpu(tmp_path: Path, cli,
                                                                              write_python_model) -> None:
    repo = tmp_path / "model_repository"
    write_python_model(repo, "on_gpu", extra_config="instance_group [{ kind: KIND_GPU count: 1 }]")
    result = cli("serve", "--background", "--json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    [error] = json.loads(result.stdout)["errors"]
    assert error["problem"] == ("model 'on_gpu' version 1 failed to load: Invalid argument: instance group on_gpu_1 "
                                "of model on_gpu has kind KIND_GPU but no GPUs are available"), error
    assert error["fix"].startswith("this machine has no GPU: serve it here with instance_group kind KIND_CPU"), error
    assert not (tmp_path / ".tritonkit" / "server.json").exists()


def test_background_serve_perf_and_stop(tmp_path: Path, cli, write_python_model, write_onnx_model) -> None:
    repo = tmp_path / "model_repository"
    write_python_model(repo, "double")
    write_onnx_model(repo, "linear", queue_delay_us=500)
    started = cli("serve", "--background", "--json", cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    info = json.loads(started.stdout)
    try:
        assert [f["name"] for f in info["fallbacks"]] == ["linear"]
        assert process.is_tritonserver(info["pid"])
        assert "Triton" not in started.stderr  # --json: one document on stdout, no progress lines
        again = cli("serve", "--background", cwd=tmp_path)
        assert again.returncode == 2 and "already running" in again.stderr

        csv_file = tmp_path / "perf.csv"
        perf = cli("perf", "linear", "--concurrency", "1:2:1", "--stability-percentage", "60",
                   "--measurement-request-count", "50", "--csv", str(csv_file), "--json", cwd=tmp_path)
        assert perf.returncode == 0, perf.stderr
        rows = json.loads(perf.stdout)["rows"]
        assert [r["concurrency"] for r in rows] == [1, 2]
        assert all(r["throughput_infer_per_sec"] > 0 and r["p99_latency_us"] > 0 for r in rows)
        assert csv_file.read_text().startswith("Concurrency,Inferences/Second")
        missing = cli("perf", "no_such_model", "--concurrency", "1", cwd=tmp_path)
        assert missing.returncode == 2 and "no_such_model" in missing.stderr
    finally:
        stopped = cli("stop", "--json", cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["how"] == "sigterm"
    assert not process.is_alive(info["pid"]) and not group_alive(info["pid"])
    ports = [int(info[k].rsplit(":", 1)[1]) for k in ("http", "grpc", "metrics")]
    assert not any(is_listening("127.0.0.1", p) for p in ports)
    assert "no tritonkit server running" in cli("stop", cwd=tmp_path).stdout


SLEEPY_MODEL = '''
import os
import time
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def initialize(self, args):
        self.marker = os.path.join(args["model_repository"], "executing")

    def execute(self, requests):
        open(self.marker, "w").close()
        time.sleep(60)
        return [pb_utils.InferenceResponse([pb_utils.Tensor("Y", pb_utils.get_input_tensor_by_name(r, "X")
                .as_numpy())]) for r in requests]
'''


def test_a_server_that_outlasts_sigterm_is_killed(tmp_path: Path, write_python_model) -> None:
    """Triton drains in-flight requests for its exit timeout (5 s here); `terminate` gives it 1 s."""
    write_python_model(tmp_path / "repo", "sleepy", SLEEPY_MODEL)
    with EmbeddedServer(tmp_path / "repo", work_dir=tmp_path / ".tritonkit") as server:
        errors: list[Exception] = []

        def call() -> None:
            try:
                infer_http(server.http_url, "sleepy", np.ones((1, 4), np.float32))
            except Exception as exc:  # the server is killed under it
                errors.append(exc)

        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        marker = server.serving.path / "sleepy" / "executing"
        deadline = time.monotonic() + 20
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the request never reached the model"
        started = time.monotonic()
        assert process.terminate(server.pid, pgid=server.pid, proc=server.proc, timeout=1.0) == "sigkill"
        assert time.monotonic() - started < 5
        assert server.proc.returncode == -signal.SIGKILL and not group_alive(server.pid)
        assert not is_listening("127.0.0.1", server.ports["http"])
        caller.join(10)
        assert errors, "the in-flight request should fail when the server is killed"


def _foreground(tmp_path: Path) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-m", "tritonkit", "serve", "--json"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    for line in proc.stdout:  # the JSON summary is printed once every model is ready
        lines.append(line)
        if line.startswith("}"):
            break
    return proc, json.loads("".join(lines))


def test_foreground_server_killed_mid_run_is_reported_with_its_log(tmp_path: Path, write_python_model) -> None:
    write_python_model(tmp_path / "model_repository", "double")
    proc, info = _foreground(tmp_path)
    try:
        os.kill(info["pid"], signal.SIGKILL)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert f"Triton server (pid {info['pid']}) exited while serving with signal 9 (SIGKILL)" in stderr
    assert "last lines of the server log:" in stderr and "Started HTTPService" in stderr


@pytest.mark.parametrize("stop_with", ["sigterm", "tritonkit stop"])
def test_foreground_stops_cleanly_and_frees_ports(tmp_path: Path, write_python_model, cli, stop_with: str) -> None:
    write_python_model(tmp_path / "model_repository", "double")
    proc, info = _foreground(tmp_path)
    try:
        np.testing.assert_array_equal(infer_http(info["http"], "double", np.ones((1, 4), np.float32)), 2)
        if stop_with == "sigterm":
            proc.send_signal(signal.SIGTERM)
        else:
            assert cli("stop", cwd=tmp_path).returncode == 0
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0, stderr
    assert not process.is_alive(info["pid"]) and not group_alive(info["pid"])
    assert not any(is_listening("127.0.0.1", int(info[k].rsplit(":", 1)[1])) for k in ("http", "grpc", "metrics"))
    assert not (tmp_path / ".tritonkit" / "server.json").exists()


def test_serve_on_every_interface_warns_once_on_stderr_not_in_the_json(tmp_path: Path, cli,
                                                                      write_python_model) -> None:
    write_python_model(tmp_path / "model_repository", "double")
    started = cli("serve", "--host", "0.0.0.0", "--background", "--json", cwd=tmp_path)
    try:
        assert started.returncode == 0, started.stderr
        info = json.loads(started.stdout)  # stdout stays pure JSON
        warnings = [line for line in started.stderr.splitlines() if line.startswith("warning: --host")]
        assert len(warnings) == 1, started.stderr
        assert "open on every interface" in warnings[0] and "no authentication by default" in warnings[0]
        assert "admin-key" in warnings[0]
        assert info["http"].startswith("0.0.0.0:")
    finally:
        stopped = cli("stop", "--json", cwd=tmp_path)
    assert stopped.returncode == 0, stopped.stderr
