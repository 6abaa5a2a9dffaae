"""`tritonkit gateway --triton HOST:PORT` where no Triton gRPC endpoint is: with nothing listening it says so in one
line at start and answers every request with a 503 naming the address (not an empty model list and a 404); given
Triton's HTTP or metrics port (HTTP/1.1, not gRPC) it refuses in one line naming the gRPC port. Against the
embedded Triton that `tritonkit serve --background` records here."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import background_server, run_cli
from tests.ports import quiet_ports
from tests.serve.conftest import _write_python_model

pytestmark = pytest.mark.server


@pytest.fixture(scope="module")
def background(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict]]:
    project = tmp_path_factory.mktemp("gateway-reach")
    _write_python_model(project / "model_repository", "double")
    with background_server(project) as info:
        yield project, info


def _answer(url: str, body: dict | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_nothing_listening_is_said_at_start_and_each_request_is_a_503_naming_it(tmp_path: Path) -> None:
    nothing, port = quiet_ports(2)
    address = f"127.0.0.1:{nothing}"
    log = tmp_path / "gateway.log"
    with log.open("w") as out:
        gateway = subprocess.Popen([sys.executable, "-m", "tritonkit", "gateway", "--triton", address, "--port",
                                    str(port)], cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while True:
            try:
                status, body = _answer(f"{base}/models")
                break
            except OSError:
                assert gateway.poll() is None and time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        assert status == 503 and body["error"]["code"] == "triton_unreachable", body
        assert f"cannot reach Triton's gRPC endpoint at {address}" in body["error"]["message"]
        status, body = _answer(f"{base}/chat/completions", {"model": "llm", "messages": [{"role": "user",
                                                                                          "content": "Hi"}]})
        assert status == 503 and address in body["error"]["message"], body
    finally:
        gateway.terminate()
        gateway.wait(timeout=15)
    [said] = [line for line in log.read_text().splitlines() if line.startswith("warning: --triton")]
    assert said.startswith(f"warning: --triton {address}: cannot reach Triton's gRPC endpoint (")


def test_triton_s_http_and_metrics_ports_are_refused_naming_the_grpc_port(background) -> None:
    project, info = background
    for wrong in (info["http"], info["metrics"]):
        refused = run_cli("gateway", "--triton", wrong, cwd=project, timeout=60)
        assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
        assert refused.stderr.strip().splitlines() == [
            f"tritonkit gateway: --triton: {wrong} answers HTTP/1.1, not gRPC: it is Triton's HTTP or metrics port; "
            f"pass Triton's gRPC port: --triton {info['grpc']}"]
