"""Steps slower than Triton's sequence idle limit, served for real on the tiny GPT (a step is made slow with the
test-only `min_step_s` parameter of `generate`): with the built idle limit a stream of 1.5 s steps completes (Triton's
default of 1 s dropped it after its first token and the client waited forever); a stream whose steps outlast a
lowered idle limit ends with an error naming the limit, over gRPC and HTTP, instead of silence."""
from __future__ import annotations

import time

import pytest
import yaml

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec
from tritonkit.package_files import package_path

pytestmark = pytest.mark.server
STEP_S = 1.5  # above Triton's default max_sequence_idle_microseconds (1 s)
HANG_S = 30  # a stream silent this long has hung (the 3 slow steps take 4.5 s)


def _sequence_batching(**changes) -> dict:
    spec = yaml.safe_load(package_path("pipelines/llm/starter/tritonkit.yaml").read_text())
    return {**spec["models"]["generate"]["sequence_batching"], **changes}


@pytest.fixture(scope="module")
def slow(serve, tmp_path_factory):
    spec = write_spec(tmp_path_factory.mktemp("slow-steps"), "tiny", generate_parameters={"min_step_s": STEP_S})
    return serve(build_repository(spec))


@pytest.fixture(scope="module")
def dropping(serve, tmp_path_factory):
    """Steps of 0.8 s against an idle limit of 0.3 s: Triton drops every sequence after its first step."""
    spec = write_spec(
        tmp_path_factory.mktemp("dropping"),
        "tiny",
        generate_parameters={"min_step_s": 0.8},
        generate_overrides={"sequence_batching": _sequence_batching(max_sequence_idle_microseconds=300_000)},
    )
    return serve(build_repository(spec))


def test_a_stream_of_steps_slower_than_one_second_completes(slow):
    body = {"text_input": "Hello", "max_tokens": 3, "ignore_eos": True}
    started = time.monotonic()
    result = clients.grpc_stream(slow.grpc_url, "llm", body, timeout=HANG_S)
    assert (result.error, len(result.ids), result.finish_reason) == ("", 3, "length")
    assert time.monotonic() - started >= 3 * STEP_S  # the steps really took longer than Triton's default idle limit
    over_http = clients.http(slow.http_url, "llm", body, stream=True, timeout=HANG_S)
    assert (over_http.error, over_http.ids) == ("", result.ids)


def test_a_stream_triton_drops_ends_with_an_error_naming_the_idle_limit(dropping):
    body = {"text_input": "Hello", "max_tokens": 5, "ignore_eos": True}
    over_grpc = clients.grpc_stream(dropping.grpc_url, "llm", body, timeout=HANG_S)
    over_http = clients.http(dropping.http_url, "llm", body, stream=True, timeout=HANG_S)
    direct = clients.grpc_stream(dropping.grpc_url, "generate", {"input_ids": list(b"Hello"), "max_tokens": 5},
                                 ids="token_ids", outputs=("token_ids",), timeout=HANG_S)
    for result in (over_grpc, over_http, direct):
        assert "max_sequence_idle_microseconds" in result.error and "0.3 s" in result.error, result
        assert len(result.ids) < 5
