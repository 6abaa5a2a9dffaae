"""The serve pieces that need no server: ONNX runner batching, fallback planning, serving folder, runtime."""
from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2 as mc

from tests.conftest import require
from tritonkit.errors import TritonkitError
from tritonkit.serve import serverlog
from tritonkit.serve.fallback import fallback_config, plan
from tritonkit.serve.onnx_runner import OnnxRunner, RunnerOptions, options_from_config
from tritonkit.serve.ports import choose_ports, exposure_warning
from tritonkit.serve.runtime import perf_analyzer_path, prepare_runtime, runtime_name, stub_path
from tritonkit.serve.serving import build_serving_repository

require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
require("onnx", "pip install 'tritonkit[export]'")
ort = require("onnxruntime", "pip install 'tritonkit[serve]'")


def snapshot(root: Path) -> dict[str, tuple[bool, bytes]]:
    return {str(p.relative_to(root)): (p.is_symlink(), p.read_bytes() if p.is_file() else b"")
            for p in sorted(root.rglob("*"))}


# -- ONNX runner ---------------------------------------------------------------------------------------
def test_runner_batches_requests_and_matches_onnxruntime(tmp_path: Path, build_onnx) -> None:
    path = build_onnx(tmp_path / "model.onnx")
    runner = OnnxRunner(path, ["Y"], batched=True, options=RunnerOptions(intra_op_threads=1))
    reference = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    requests = [{"X": rng.standard_normal((n, 4)).astype(np.float32)} for n in (1, 3, 2)]
    results = runner.run_requests(requests)
    assert [r["Y"].shape for r in results] == [(1, 3), (3, 3), (2, 3)]
    for request, result in zip(requests, results):
        np.testing.assert_allclose(result["Y"], reference.run(["Y"], request)[0], rtol=1e-6, atol=1e-6)


def test_runner_groups_by_shape_and_isolates_a_bad_request(tmp_path: Path, build_onnx) -> None:
    runner = OnnxRunner(build_onnx(tmp_path / "model.onnx"), ["Y"], batched=True)
    good = {"X": np.ones((2, 4), np.float32)}
    bad = {"X": np.ones((2, 5), np.float32)}  # wrong feature size: onnxruntime rejects it
    results = runner.run_requests([good, bad, good])
    assert isinstance(results[1], Exception) and "X" in str(results[1])
    np.testing.assert_array_equal(results[0]["Y"], results[2]["Y"])
    assert len(runner._groups([good, bad, good])) == 2


def test_runner_without_batch_dimension_runs_each_request_alone(tmp_path: Path, build_onnx) -> None:
    runner = OnnxRunner(build_onnx(tmp_path / "model.onnx"), ["Y"], batched=False)
    requests = [{"X": np.full((2, 4), v, np.float32)} for v in (0.0, 1.0)]
    first, second = runner.run_requests(requests)
    np.testing.assert_array_equal(first["Y"], runner.run(requests[0])["Y"])
    assert not np.allclose(first["Y"], second["Y"])


def test_runner_rejects_outputs_the_model_lacks(tmp_path: Path, build_onnx) -> None:
    with pytest.raises(ValueError, match="'Z_missing'"):
        OnnxRunner(build_onnx(tmp_path / "model.onnx"), ["Z_missing"], batched=True)


def test_runner_threads_split_the_cores_over_the_instances_of_the_config_it_runs() -> None:
    two = {"instance_group": [{"kind": "KIND_CPU", "count": 2}]}
    assert options_from_config(two, cpu_count=8).intra_op_threads == 4
    assert options_from_config({"instance_group": [{"count": 3}, {"count": 1}]}, cpu_count=8).intra_op_threads == 2
    assert options_from_config({}, cpu_count=2).intra_op_threads == 2
    assert options_from_config({"instance_group": [{"count": 4}]}, cpu_count=2).intra_op_threads == 1
    explicit = {**two, "parameters": {"intra_op_thread_count": {"string_value": "3"},
                                      "allow_spinning": {"string_value": "true"}}}
    options = options_from_config(explicit, cpu_count=8)
    assert (options.intra_op_threads, options.spin) == (3, True)
    assert options_from_config(two, cpu_count=8).spin is False  # served default: idle workers sleep


def test_fallback_without_a_thread_count_leaves_the_split_to_the_runner(tmp_path: Path, write_onnx_model) -> None:
    write_onnx_model(tmp_path / "repo", "plain")
    config, fallback = plan(tmp_path / "repo")[0]["plain"]
    assert fallback.threads == 0 and "cores / instances" in fallback.describe()
    assert "intra_op_thread_count" not in fallback_config(config, fallback, gpu=False).parameters


# -- fallback plan and config ----------------------------------------------------------------------------
def test_fallback_config_keeps_tensors_batching_instances_and_sequences(tmp_path: Path, write_onnx_model) -> None:
    write_onnx_model(tmp_path / "repo", "seq", batching="""
        sequence_batching { max_sequence_idle_microseconds: 5000000
          control_input [{ name: "START" control [{ kind: CONTROL_SEQUENCE_START fp32_false_true: [0, 1] }] }] }
        parameters { key: "intra_op_thread_count" value { string_value: "3" } }""")
    planned, problems = plan(tmp_path / "repo")
    assert problems == []
    config, fallback = planned["seq"]
    assert (fallback.kind, fallback.onnx_file, fallback.threads) == ("onnxruntime_onnx", "model.onnx", 3)
    new = fallback_config(config, fallback, gpu=False)
    assert (new.backend, new.platform, new.name, new.max_batch_size) == ("python", "", "seq", 16)
    assert [i.name for i in new.input] == ["X"] and [o.name for o in new.output] == ["Y"]
    assert new.sequence_batching == config.sequence_batching
    assert new.instance_group[0].kind == mc.ModelInstanceGroup.KIND_CPU and list(new.instance_group[0].gpus) == []
    assert fallback_config(config, fallback, gpu=True).instance_group[0].kind == mc.ModelInstanceGroup.KIND_GPU
    text_format.Parse(text_format.MessageToString(new), mc.ModelConfig())  # round-trips


def test_models_the_embedded_server_cannot_run_are_each_named(tmp_path: Path, write_onnx_model) -> None:
    repo = tmp_path / "repo"
    write_onnx_model(repo, "torch_only", header='platform: "pytorch_libtorch"', with_onnx=False,
                     extra_files={"model.pt": b"torchscript"})
    write_onnx_model(repo, "tf", header='platform: "tensorflow_savedmodel"', with_onnx=False)
    write_onnx_model(repo, "plan_only", header='backend: "tensorrt"', with_onnx=False,
                     extra_files={"model.plan": b"engine"})
    with pytest.raises(TritonkitError) as info:
        build_serving_repository(repo, tmp_path / "work")
    lines = info.value.lines()
    assert len(lines) == 3
    assert any("pytorch_libtorch model 'torch_only' cannot be served embedded: no model.onnx" in ln for ln in lines)
    assert any("platform 'tensorflow_savedmodel' is not available in the embedded server" in ln for ln in lines)
    assert any("tensorrt_plan model 'plan_only'" in ln and "model.plan" in ln for ln in lines)
    assert all("\n" not in ln for ln in lines)


def test_serving_folder_leaves_the_repository_untouched_and_is_reused(
        tmp_path: Path, write_onnx_model, write_python_model) -> None:
    repo = tmp_path / "repo"
    write_python_model(repo, "py")
    write_onnx_model(repo, "onnx_model")
    before = snapshot(repo)
    first = build_serving_repository(repo, tmp_path / "work")
    assert [f.name for f in first.fallbacks] == ["onnx_model"]
    assert (first.path / "onnx_model" / "1" / "model.py").read_text() == \
        (Path(__file__).parents[2] / "toolkit/tritonkit/serve/onnx_model.py").read_text()
    assert (first.path / "onnx_model" / "1" / "model.onnx").resolve() == (repo / "onnx_model/1/model.onnx").resolve()
    assert (first.path / "py" / "1" / "model.py").is_symlink() and not (first.path / "py").is_symlink()
    assert build_serving_repository(repo, tmp_path / "work").path == first.path
    (repo / "py" / "1" / "model.py").write_text("# changed\n")
    assert build_serving_repository(repo, tmp_path / "work").path != first.path
    assert snapshot(repo).keys() == before.keys()


# -- server log, ports, runtime ------------------------------------------------------------------------
def test_multi_line_reasons_become_one_line() -> None:
    reason = "Internal: ValueError: inner\n\nAt:\n  /r/m/1/model.py(2): helper\n  /r/m/1/model.py(5): initialize\n"
    assert serverlog.one_line(reason) == "Internal: ValueError: inner (at /r/m/1/model.py(2): helper)"


def test_a_taken_port_is_named_with_its_flag() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(TritonkitError) as info:
            choose_ports("127.0.0.1", {"http": None, "grpc": port, "metrics": None})
    assert info.value.field == "--grpc-port" and f"port {port} is already in use" in info.value.line()
    ports = choose_ports("127.0.0.1", {"http": None, "grpc": port, "metrics": None})
    assert ports["grpc"] == port and len(set(ports.values())) == 3


def test_runtime_is_prepared_with_stub_and_perf_libraries(tmp_path: Path) -> None:
    runtime = prepare_runtime(cache=tmp_path)
    assert os.access(runtime.tritonserver, os.X_OK)
    assert (runtime.backends / "python" / "triton_python_backend_stub").is_file()
    assert runtime.env["LD_LIBRARY_PATH"].split(os.pathsep)[0] != ""
    ldd = subprocess.run(["ldd", str(perf_analyzer_path())], env=runtime.env, capture_output=True, text=True)
    assert "not found" not in ldd.stdout, ldd.stdout
    ldd = subprocess.run(["ldd", str(runtime.tritonserver)], env=runtime.env, capture_output=True, text=True)
    assert "not found" not in ldd.stdout, ldd.stdout
    assert prepare_runtime(cache=tmp_path).root == runtime.root  # prepared once, then reused


def test_each_environment_gets_its_own_runtime_copy(tmp_path: Path) -> None:
    """Two virtualenvs (two wheel locations) never share a prepared runtime: rebuilding one for the other would
    pull the stub from under a running server ("Failed to give execute permission to triton_python_backend_stub")."""
    first, second = tmp_path / "venv-a" / "tritonserver", tmp_path / "venv-b" / "tritonserver"
    assert runtime_name(first) != runtime_name(second)
    assert runtime_name(first) == runtime_name(tmp_path / "venv-a" / "." / "tritonserver")


def test_a_python_version_without_stub_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "python_backend_stubs" / "3.9").mkdir(parents=True)
    with pytest.raises(TritonkitError, match=r"has no Triton Python-backend stub \(the wheel has 3.9\)"):
        stub_path(tmp_path)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_a_loopback_host_gets_no_exposure_warning(host: str) -> None:
    assert exposure_warning(host) is None


@pytest.mark.parametrize(("host", "where"), [("0.0.0.0", "every interface"), ("::", "every interface"),
                                             ("192.168.1.20", "192.168.1.20"), ("myhost", "myhost")])
def test_a_host_beyond_loopback_is_one_warning_line(host: str, where: str) -> None:
    warning = exposure_warning(host)
    assert warning is not None and "\n" not in warning
    assert warning.startswith(f"warning: --host {host}: ") and f"open on {where} " in warning


def test_init_error_is_an_unusable_repository_not_the_summary_of_failed_models(tmp_path: Path) -> None:
    """Lines as Triton 2.51 logs them (--exit-on-error=false): an init failure ends startup at once, while 'failed to
    load all models' follows any model's failure, whose own line says why (serve used to take it for the former)."""
    from tritonkit.serve import serverlog

    log = tmp_path / "triton.log"
    log.write_text('I1201 21:19:30.248490 32655 tritonserver.cc:2598] \n'
                   'E1201 21:19:30.248549 32655 tritonserver.cc:2607] "Internal: failed to load all models"\n')
    assert serverlog.init_error(log) is None
    log.write_text('E1201 21:14:16.558343 14456 server.cc:241] "CudaDriverHelper has not been initialized."\n'
                   'E1201 21:14:16.754660 14456 tritonserver.cc:2607] "Invalid argument: repository path is not a '
                   'valid directory"\n')
    assert serverlog.init_error(log) == "Invalid argument: repository path is not a valid directory"
