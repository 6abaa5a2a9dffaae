"""A client that leaves cancels what the gateway does for it: the wait for Triton's first response
(`unless_disconnected`) and a stream being sent (`StreamedResponse`), under uvicorn as the gateway runs it. No
Triton here: for the LLM the cancellation cannot be seen in Triton (2.51 does not forward an ensemble request's
cancellation to `generate`), so the gateway's own half is checked on its own; test_tts.py sees it end to end."""
import asyncio
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.ports import quiet_ports
from tritonkit.gateway.disconnect import StreamedResponse, unless_disconnected
from tritonkit.gateway.errors import ApiError

ENDED: dict[str, float] = {}


async def waiting(request: Request) -> Response:
    async def work() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            ENDED["/wait"] = time.monotonic()

    await unless_disconnected(request, work())
    return Response("never")


async def streaming(request: Request) -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        try:
            yield b"first-chunk"
            await asyncio.sleep(60)
            yield b"never"
        finally:
            ENDED["/stream"] = time.monotonic()

    return StreamedResponse(chunks())


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = Starlette(routes=[Route("/wait", waiting), Route("/stream", streaming)],
                    exception_handlers={ApiError: _api_error})
    [port] = quiet_ports(1)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield port
    server.should_exit = True
    thread.join(10)


@pytest.mark.parametrize("path", ["/wait", "/stream"])
def test_a_client_that_leaves_cancels_its_work(port, path):
    ENDED.pop(path, None)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: gateway\r\n\r\n".encode())
        if path == "/stream":   # the first chunk arrives, the stream is running
            received = b""
            while b"first-chunk" not in received:
                received += sock.recv(4096)
            assert received.startswith(b"HTTP/1.1 200")
        else:   # the request is in, its work is waiting
            time.sleep(0.5)
        assert path not in ENDED
        left = time.monotonic()
    deadline = left + 10
    while path not in ENDED and time.monotonic() < deadline:
        time.sleep(0.02)
    assert path in ENDED and ENDED[path] - left < 5   # cancelled, not run out its 60 s
