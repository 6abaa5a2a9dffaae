"""`tritonkit stop` with a gateway attached (`tritonkit serve --gateway`) stops Triton with SIGTERM in seconds, as
without one. The gateway keeps a finished request's gRPC stream for the next request; a Triton shutting down waits
for open streams (the stream keeps its last request's model loaded, the gRPC server's shutdown waits for open
calls), so kept streams must be let go once Triton is not ready, else the stop ends in SIGKILL after its timeout."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest

from tests.conftest import run_cli
from tests.gateway.conftest import starter
from tests.ports import quiet_ports

pytestmark = pytest.mark.server


def test_stop_with_a_gateway_attached_is_a_sigterm_within_5_s(tmp_path: Path) -> None:
    project = starter(tmp_path / "llm", "llm")
    [port] = quiet_ports(1)
    serve = subprocess.Popen([sys.executable, "-m", "tritonkit", "serve", "--gateway", "--gateway-port", str(port)],
                             cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
        deadline = time.monotonic() + 240
        while True:
            try:
                [model] = [m.id for m in client.models.list()]
                break
            except openai.APIConnectionError:
                assert serve.poll() is None and time.monotonic() < deadline, serve.stderr.read() if serve.stderr else ""
                time.sleep(0.5)
        for _ in range(2):   # the second request goes on the stream the first one left open
            reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}],
                                                   max_tokens=2)
            assert reply.usage is not None and reply.usage.completion_tokens == 2
        stopped = run_cli("stop", "--json", cwd=project, timeout=60)
        assert stopped.returncode == 0, stopped.stderr
        report = json.loads(stopped.stdout)
        assert report["stopped"] and report["how"] == "sigterm" and report["seconds"] < 5, report
        assert serve.wait(timeout=30) == 0
    finally:
        if serve.poll() is None:
            serve.send_signal(signal.SIGTERM)
            serve.wait(timeout=60)
