"""A new pipeline is its folder plus one registry line: tests/pipelines/echo/ brings an OpenAI-style route and an
engine with a knob, and with TRITONKIT_PIPELINES naming its registry the unchanged CLI offers it in the schema,
serves its route in `tritonkit gateway` and tunes its knob with `tritonkit tune --joint`."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO_ROOT, require
from tests.ports import quiet_ports
from tritonkit.plugin.host import SOURCE_ENV

ENV = {**os.environ, SOURCE_ENV: "tests.pipelines.echo.registry:PIPELINES",
       "PYTHONPATH": os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p)}
TEXT = {"name": "TEXT", "data_type": "TYPE_STRING", "dims": [1]}
ECHO = {"name": "ECHO", "data_type": "TYPE_STRING", "dims": [1]}
SPEC = {"version": 1, "gateway": {"models": {"my-echo": {"pipeline": "echo"}}}, "models": {
    "engine": {"backend": "python", "max_batch_size": 8, "input": [TEXT], "output": [ECHO],
               "parameters": {"echo_slots": "4"}, "files": {"model.py": "model.py"}},
    "echo": {"platform": "ensemble", "max_batch_size": 8, "input": [TEXT], "output": [ECHO],
             "ensemble_scheduling": {"step": [{"model_name": "engine", "model_version": -1,
                                               "input_map": {"TEXT": "TEXT"}, "output_map": {"ECHO": "ECHO"}}]}}}}


def tritonkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tritonkit", *args], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text("class TritonPythonModel:\n    pass\n")
    (tmp_path / "tritonkit.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False))
    return tmp_path


def test_the_schema_offers_it_to_the_gateway(project: Path) -> None:
    done = tritonkit("schema", cwd=project)
    assert done.returncode == 0, done.stderr
    model = json.loads(done.stdout)["$defs"]["GatewayModelSpec"]["properties"]
    assert model["pipeline"]["enum"] == ["llm", "tts", "asr", "embed", "echo"]
    assert "echo: echo, the ensemble" in model["model"]["description"]


@contextmanager
def gateway(project: Path) -> Iterator[str]:
    """`tritonkit gateway` in the project (no Triton: the spec names the model ids); its base URL once it answers."""
    [port] = quiet_ports(1)
    log = (project / "gateway.log").open("w")
    process = subprocess.Popen([sys.executable, "-m", "tritonkit", "gateway", "--triton", "127.0.0.1:9",
                                "--port", str(port)], cwd=project, env=ENV, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                assert process.poll() is None and time.monotonic() < deadline, (project / "gateway.log").read_text()
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()


def test_the_gateway_serves_its_route(project: Path) -> None:
    require("starlette", "pip install 'tritonkit[gateway]'")
    with gateway(project) as base:
        models = json.loads(urllib.request.urlopen(f"{base}/models", timeout=5).read())
        assert [(m["id"], m["owned_by"]) for m in models["data"]] == [("my-echo", "tritonkit-echo")]
        request = urllib.request.Request(f"{base}/echo", data=json.dumps({"model": "my-echo", "input": "hi"}).encode(),
                                         method="POST")
        answer = json.loads(urllib.request.urlopen(request, timeout=5).read())
    assert answer == {"object": "echo", "model": "my-echo", "triton_model": "echo", "output": "hi"}


def test_tune_searches_and_writes_back_its_knob(project: Path) -> None:
    require("ruamel.yaml", "pip install 'tritonkit[tune]'")
    planned = tritonkit("tune", "echo", "--joint", "--dry-run", cwd=project)
    assert planned.returncode == 0, planned.stderr
    assert planned.stdout.splitlines()[1:] == ["  engine.echo_slots: [2, 4, 8] (now 4)"]
    helped = " ".join(tritonkit("tune", "--help", cwd=project).stdout.split())
    assert "echo_slots: the echo engine's" in helped and "echo_slots]" in helped   # its knob is searched by default
    done = tritonkit("tune", "echo", "--joint", "--json", cwd=project)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads(done.stdout)
    assert summary["winner_settings"] == "engine.echo_slots=8"
    assert [m["tokens_per_s"] for m in summary["echo_measurements"]] == [160.0, 80.0, 320.0]   # 4 (the spec), 2, 8
    tuned = yaml.safe_load((project / "tritonkit.yaml").read_text())["tuned"]
    assert tuned["engine"]["parameters"] == {"echo_slots": 8}
    rebuilt = (project / "model_repository" / "engine" / "config.pbtxt").read_text()
    assert 'key: "echo_slots"' in rebuilt and 'string_value: "8"' in rebuilt
