"""Smoke checks that must fail when they should, on the real embedded Triton started by `tritonkit serve`.

One background server runs a plain Python model, an ONNX model (served through the onnxruntime fallback),
a decoupled model that completes its stream without sending anything, and a model answering one value more than its
config declares (with and without golden samples that record that answer). A second server runs a model that kills
its server, so the negative checks after it meet a dead connection.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tritonclient.grpc as grpcclient

from tests.conftest import background_server, require, run_cli
from tests.serve.conftest import _write_onnx_model, _write_python_model
from tritonkit.golden import write_pairs
from tritonkit.serve.ports import choose_ports
from tritonkit.serve.server import EmbeddedServer
from tritonkit.smoke.checks import FALLBACK, negative_checks
from tritonkit.smoke.clients import open_client
from tritonkit.validate.repository_check import validate_repository

pytestmark = pytest.mark.server
require("pytriton", "the embedded server: pip install 'tritonkit[serve]'")
require("onnx", "pip install 'tritonkit[export]'")

SILENT = '''
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        for request in requests:  # completes each stream without a single response
            request.get_response_sender().send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
'''
ONE_VALUE_TOO_MANY = '''
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):  # Y[N, 3] for a config that declares dims [2]: Triton passes it on unchecked
        out = []
        for request in requests:
            x = pb_utils.get_input_tensor_by_name(request, "X").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("Y", np.concatenate([x, x[:, :1]], axis=1))]))
        return out
'''
KILLS_ITS_SERVER = '''
import os
import signal

class TritonPythonModel:
    def execute(self, requests):
        os.kill(os.getppid(), signal.SIGKILL)  # the stub's parent is tritonserver
        return []
'''


@pytest.fixture(scope="module")
def background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    """A project served by `tritonkit serve --background` on free (non-default) ports; stopped afterwards."""
    project = tmp_path_factory.mktemp("smoke_can_fail")
    repo = project / "model_repository"
    _write_python_model(repo, "double")
    _write_onnx_model(repo, "linear")
    _write_python_model(repo, "silent", SILENT, dims=1, extra_config="model_transaction_policy { decoupled: true }")
    for name in ("too_long", "too_long_golden"):
        _write_python_model(repo, name, ONE_VALUE_TOO_MANY, dims=2)
    x = np.array([[1.0, 2.0]], dtype=np.float32)  # the model's own answer recorded, as an export records it
    write_pairs(repo / "too_long_golden" / "golden", [({"X": x}, {"Y": np.array([[1.0, 2.0, 1.0]], np.float32)})],
                {"default": {"atol": 0.0, "rtol": 0.0}, "outputs": {}})
    with background_server(project) as info:
        yield project, info


def rows(report: dict, model: str) -> list[dict]:
    return [r for r in report["results"] if r["model"] == model]


def test_url_of_the_background_server_finds_its_grpc_port(background) -> None:
    project, info = background
    http_port = info["http"].rsplit(":", 1)[1]
    for host in ("127.0.0.1", "localhost"):
        result = run_cli("smoke", "--url", f"{host}:{http_port}", "--json", cwd=project)
        report = json.loads(result.stdout)
        assert report["target"] == {"http_url": f"{host}:{http_port}", "grpc_url": info["grpc"]}
        servers = {r["protocol"]: r["status"] for r in report["results"] if r["check"] == "server"}
        assert servers == {"http": "pass", "grpc": "pass"}


def test_url_of_an_unknown_server_needs_grpc_url_or_http_only(background, tmp_path: Path) -> None:
    project, info = background
    repository = str(project / "model_repository")
    refused = run_cli("smoke", "-r", repository, "--url", info["http"], cwd=tmp_path)  # no state file here
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == (
        f"--url {info['http']}: the grpc endpoint of this server is unknown (not the background server of this "
        "project, "
        "not Triton's default port 8000); pass --grpc-url HOST:PORT, or --protocol http to run the HTTP checks only")
    http_only = run_cli("smoke", "-r", repository, "--url", info["http"], "--protocol", "http", cwd=tmp_path)
    lines = http_only.stdout.strip().splitlines()
    assert "(http only)" in lines[-1] and not any(" grpc " in line for line in lines)


def test_no_server_at_an_endpoint_is_one_line_not_a_table_of_refusals(background, tmp_path: Path) -> None:
    project, info = background
    free = choose_ports("127.0.0.1", {})  # nothing listens on these once chosen: a stopped server's ports
    stopped = run_cli("smoke", "-r", str(project / "model_repository"), "--url", f"127.0.0.1:{free['http']}",
                      "--protocol", "http", cwd=tmp_path)
    assert stopped.returncode == 2 and stopped.stdout == ""
    assert stopped.stderr.strip() == (
        f"tritonkit smoke: --url: no server at 127.0.0.1:{free['http']} (http); start one with "
        "`tritonkit serve --background`, or point --url at a running server")
    half = run_cli("smoke", "--url", info["http"], "--grpc-url", f"127.0.0.1:{free['grpc']}", "--json", cwd=project)
    assert half.returncode == 2
    [error] = json.loads(half.stdout)["errors"]
    assert (error["field"], error["problem"]) == ("--grpc-url", f"no server at 127.0.0.1:{free['grpc']} (grpc)")


def test_decoupled_model_that_sends_nothing_fails(background) -> None:
    project, _ = background
    result = run_cli("smoke", "--json", cwd=project)
    assert result.returncode == 1
    silent = {r["protocol"]: r for r in rows(json.loads(result.stdout), "silent") if r["check"] == "infer:generated"}
    assert set(silent) == {"http", "grpc"}
    for row in silent.values():
        assert row["status"] == "fail" and row["detail"] == "the stream completed without a single response"


def test_an_output_of_another_shape_than_declared_fails_with_or_without_golden_samples(background) -> None:
    project, _ = background
    result = run_cli("smoke", "--model", "too_long", "--model", "too_long_golden", "--json", cwd=project)
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    for model, check in (("too_long", "infer:generated"), ("too_long_golden", "request:000")):
        behaviour = {r["protocol"]: r for r in rows(report, model) if r["check"] == check}
        assert set(behaviour) == {"http", "grpc"}, rows(report, model)
        for row in behaviour.values():
            assert row["status"] == "fail", row
            assert "output 'Y' has shape [1, 3], the config declares [1, 2]" in row["detail"], row


def test_fallback_model_is_shown_in_json_and_table(background) -> None:
    project, _ = background
    report = json.loads(run_cli("smoke", "--json", cwd=project).stdout)
    assert report["fallback_models"] == ["linear"]
    assert {r["served_as"] for r in rows(report, "linear")} == {FALLBACK}
    assert {r["served_as"] for r in rows(report, "double")} == {""}
    config_row = next(r for r in rows(report, "linear") if r["check"] == "config")
    assert config_row["status"] == "pass" and "not 'onnxruntime_onnx'" in config_row["detail"]

    table = run_cli("smoke", "--protocol", "grpc", cwd=project).stdout.strip().splitlines()
    [linear] = [line for line in table if line.startswith("linear ")]
    assert linear.split()[1] == "PASS" and linear.endswith(f"({FALLBACK})")
    assert not any(FALLBACK in line for line in table if line.startswith("double "))
    assert table[-1].endswith(f"served through the {FALLBACK}, not their declared backend: linear")
    every = run_cli("smoke", "--protocol", "grpc", "--verbose", cwd=project).stdout.strip().splitlines()
    rows_of_linear = [line for line in every if " linear " in line]
    assert rows_of_linear and all(f"PASS ({FALLBACK})" in line for line in rows_of_linear)


def test_negative_checks_against_a_server_that_died_fail(tmp_path: Path) -> None:
    repo = tmp_path / "model_repository"
    _write_python_model(repo, "a_crash", KILLS_ITS_SERVER)
    _write_python_model(repo, "double")
    with EmbeddedServer(repo, work_dir=tmp_path / ".tritonkit") as server:
        result = run_cli("smoke", "-r", str(repo), "--url", server.http_url, "--protocol", "http", "--json")
        assert server.proc is not None and server.proc.poll() is not None  # the crash model did kill it
    report = json.loads(result.stdout)
    negatives = [r for r in report["results"] if r["check"].startswith("negative:")]
    assert [r["check"] for r in negatives] == ["negative:unknown-model", "negative:wrong-dtype", "negative:wrong-shape",
                                               "negative:missing-input"]
    for row in negatives:
        assert row["status"] == "fail" and row["detail"].startswith("no answer from the server, so no rejection"), row


@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_refused_connection_is_not_a_rejection(protocol: str) -> None:
    port = choose_ports("127.0.0.1", {})["http"]  # free, so nothing listens there
    client = open_client(protocol, f"127.0.0.1:{port}")
    try:
        unknown = negative_checks(client, None, None)[0]
    finally:
        client.close()
    assert unknown.status == "fail" and "no answer from the server" in unknown.detail


def test_negative_checks_against_a_model_that_is_not_ready_are_skipped_not_passed(tmp_path: Path) -> None:
    """The server refuses any request for an unloaded model, so its wrong-dtype/shape rows would pass untested."""
    repo = tmp_path / "model_repository"
    _write_python_model(repo, "double")
    config = validate_repository(repo)["double"]
    with EmbeddedServer(repo, work_dir=tmp_path / ".tritonkit") as server:
        rows_by_state = {}
        for state in ("ready", "unloaded"):
            if state == "unloaded":
                grpcclient.InferenceServerClient(server.grpc_url).unload_model("double")
            for protocol, url in (("http", server.http_url), ("grpc", server.grpc_url)):
                client = open_client(protocol, url)
                try:
                    assert client.model_ready("double") is (state == "ready")
                    rows_by_state[state, protocol] = {
                        r.check: r for r in negative_checks(client, "double", config) if r.model == "double"
                    }
                finally:
                    client.close()
    for (state, protocol), negatives in rows_by_state.items():
        assert list(negatives) == ["negative:wrong-dtype", "negative:wrong-shape", "negative:missing-input"]
        for row in negatives.values():
            if state == "ready":
                assert row.status == "pass" and row.detail.startswith("rejected: "), (protocol, row)
            else:
                assert row.status == "skip", (protocol, row)
                assert row.detail.startswith("the model is not ready, so its refusal does not test this request: "
                                             ""), (protocol, row)
