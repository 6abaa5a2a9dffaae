"""The `generate` model's `max_streams` served for real: with that many generations live, one more is refused at
once with the limit named (over gRPC and over HTTP through the `llm` ensemble), and once they end a new one runs."""
from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.llm import clients
from tests.llm.conftest import build_repository, write_spec

pytestmark = pytest.mark.server
HELLO = list(b"Hello")
LIMIT = 2
REFUSAL = f"{LIMIT} generations are live, the limit (max_streams) is {LIMIT}"


@pytest.fixture(scope="module")
def server(serve, tmp_path_factory):
    spec = write_spec(tmp_path_factory.mktemp("limit-spec"), "tiny",
                      generate_parameters={"max_streams": LIMIT, "cancel_poll_s": 0.05})
    return serve(build_repository(spec))


def _refused_while_full(server, probe: Callable[[], clients.Result], attempts: int = 5) -> clients.Result:
    """`probe()` while LIMIT long generations stream. A hog may finish before the probe lands (250 tiny steps
    take a fraction of a second), so a probe that got in is retried with fresh hogs; so is a hog refused
    because a cancelled one of the previous attempt was not freed yet."""
    seen = []
    for _ in range(attempts):
        _wait_idle(server)  # cancelled hogs of a previous attempt are freed within a poll interval
        hogs = [clients.GrpcStream(server.grpc_url) for _ in range(LIMIT)]
        try:
            for hog in hogs:
                hog.send("generate", {"input_ids": HELLO, "max_tokens": 250, "ignore_eos": True}, ["token_ids"])
            errors = [hog.next()[1] for hog in hogs]
            if any(errors):
                seen += [f"hog refused: {e}" for e in errors if e]
                assert all(REFUSAL in str(e) for e in errors if e), seen
                continue
            result = probe()
        finally:
            for hog in hogs:
                hog.close(cancel=True)
        if result.error:
            return result
        seen.append("probe got in")
    raise AssertionError(f"no probe was refused in {attempts} attempts with {LIMIT} generations live: {seen}")


def _wait_idle(server) -> None:
    """Waits until the published live count is 0. generate publishes every `cancel_poll_s` (0.05 s), so a
    reading taken at once may predate the cancellations just sent: wait several intervals first."""
    time.sleep(0.5)
    for _ in range(200):
        if clients.metrics(server.metrics_url)["llm_generations_live"] == 0:
            return
        time.sleep(0.05)
    raise AssertionError("generations still live 10 s after their streams were cancelled")


def test_one_stream_over_the_limit_is_refused_over_grpc_and_http_then_accepted(server) -> None:
    grpc = _refused_while_full(server, lambda: clients.grpc_stream(
        server.grpc_url, "generate", {"input_ids": HELLO, "max_tokens": 4}, ids="token_ids",
        outputs=("token_ids", "finish_reason")))
    assert REFUSAL in grpc.error and "raise the model's max_streams parameter" in grpc.error, grpc.error
    http = _refused_while_full(server, lambda: clients.http(server.http_url, "llm",
                                                            {"text_input": "Hello", "max_tokens": 4}, stream=True))
    assert REFUSAL in http.error, http.error
    _wait_idle(server)  # the hogs' cancellations are seen: the limit admits new generations again
    accepted = [clients.grpc_stream(server.grpc_url, "llm",
                                    {"text_input": "Hello", "max_tokens": 4}) for _ in range(LIMIT + 1)]
    assert all(r.error == "" and len(r.ids) >= 1 for r in accepted), [r.error for r in accepted]
