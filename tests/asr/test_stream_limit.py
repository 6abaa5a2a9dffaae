"""`asr_stream`'s `max_streams` served for real over gRPC: with that many streams live, a new stream's first chunk
is refused with the limit named; once one stream ends (END), a new stream is accepted.

The built config's max_streams is lowered to 2 for this server (the shipped value bounds a real deployment)."""
from __future__ import annotations

import re

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

from examples.asr.project import write_project
from tests.asr.test_stream_served import CHUNK, FIRST_ID, _chunk
from tests.conftest import run_cli
from tritonkit.serve.server import EmbeddedServer

pytestmark = pytest.mark.server
LIMIT = 2


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    project = tmp_path_factory.mktemp("asr_limit")
    write_project(project)
    result = run_cli("build", cwd=project)
    assert result.returncode == 0, result.stderr
    config = project / "model_repository" / "asr_stream" / "config.pbtxt"
    text, count = re.subn(r'(key: "max_streams"\s*value:\s*\{\s*string_value: )"\d+"', rf'\1"{LIMIT}"',
                          config.read_text())
    assert count == 1, config.read_text()
    config.write_text(text)
    with EmbeddedServer(project / "model_repository", work_dir=project / ".tritonkit", startup_timeout=240) as server:
        yield server


def test_a_stream_beyond_max_streams_is_refused_until_one_ends(served) -> None:
    client = grpcclient.InferenceServerClient(served.grpc_url)
    silence = np.zeros(CHUNK, np.float32)
    try:
        for k in range(LIMIT):
            assert isinstance(_chunk(client, FIRST_ID + k, silence, start=True, end=False), str)
        with pytest.raises(InferenceServerException) as refused:
            _chunk(client, FIRST_ID + LIMIT, silence, start=True, end=False)
        message = refused.value.message()
        assert f"{LIMIT} streams are live, the limit (max_streams) is {LIMIT}" in message, message
        assert "retry when one ends" in message
        _chunk(client, FIRST_ID + 1, silence, start=False, end=True)          # the second stream ends
        fresh = _chunk(client, FIRST_ID + 10, silence, start=True, end=False)  # now there is room
        assert isinstance(fresh, str)
        for key in (FIRST_ID, FIRST_ID + 10):
            _chunk(client, key, silence, start=False, end=True)
    finally:
        client.close()
