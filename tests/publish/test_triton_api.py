"""The repository API's errors against a real tritonserver that is not in explicit model control."""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tritonkit.publish.triton_api import RepositoryApi, ServerError
from tritonkit.serve import health, process
from tritonkit.serve.ports import choose_ports
from tritonkit.serve.runtime import prepare_runtime
from tritonkit.triton.model_config import pb

pytestmark = [pytest.mark.server]


@pytest.mark.parametrize("mode", ["none", "poll"])
def test_a_server_not_in_explicit_mode_is_told_to_start_in_it(mode: str, tmp_path: Path) -> None:
    """Triton refuses loads outside explicit mode with 'polling is enabled'; the fix says which flag rollout needs."""
    runtime = prepare_runtime()
    ports = choose_ports("127.0.0.1", {"http": None, "grpc": None, "metrics": None})
    (tmp_path / "repo").mkdir()
    cmd = [str(runtime.tritonserver), f"--model-repository={tmp_path / 'repo'}",
           f"--backend-directory={runtime.backends}",
           f"--model-control-mode={mode}", *(f"--{e}-address=127.0.0.1" for e in ports),
           *(f"--{e}-port={p}" for e, p in ports.items())]
    with open(tmp_path / "triton.log", "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=runtime.env, start_new_session=True)
    url = f"127.0.0.1:{ports['http']}"
    try:
        deadline = time.monotonic() + 60
        while not health.is_live(url) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        with pytest.raises(ServerError) as refused:
            RepositoryApi(url).load("scale", pb.ModelConfig(name="scale", backend="python"))
        assert refused.value.lines() == [
            f"{url}: scale: load failed: explicit model load / unload is not allowed if polling is enabled; "
            "start the server with --model-control-mode=explicit (the previous version keeps serving)"]
    finally:
        process.terminate(proc.pid, pgid=proc.pid, proc=proc)
