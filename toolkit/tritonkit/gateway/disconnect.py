"""Work that stops when its HTTP client goes away: a disconnected client cancels its Triton request.

The work runs in the request's own task, and a watcher task cancels that task when the client disconnects. Running
the work as a second task and waiting for either of the two (as this did first) put two more event-loop turns
between Triton's first response and the first byte sent back.
"""
import asyncio
from collections.abc import Awaitable
from types import TracebackType
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from tritonkit.gateway.errors import ApiError

T = TypeVar("T")


class CancelledOnDisconnect:
    """`async with CancelledOnDisconnect(receive) as watch:` cancels the current task once the HTTP client
    disconnects; that cancellation ends the block without an error and sets `watch.disconnected`."""

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.disconnected = False
        self._watcher: asyncio.Task[None] | None = None

    async def _watch(self, task: asyncio.Task[Any]) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass
        self.disconnected = True
        task.cancel()

    async def __aenter__(self) -> "CancelledOnDisconnect":
        task = asyncio.current_task()
        assert task is not None
        self._watcher = asyncio.get_running_loop().create_task(self._watch(task))
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> bool:
        assert self._watcher is not None
        self._watcher.cancel()
        if self.disconnected and kind is not None and issubclass(kind, asyncio.CancelledError):
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()   # the cancellation was this block's own: the task goes on (to answer 499, or return)
            return True
        return False


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result, or `work` cancelled (and its Triton stream with it) once the client disconnects."""
    async with CancelledOnDisconnect(request.receive):
        return await work
    raise ApiError(499, "the client closed the request", code="client_closed_request")


class StreamedResponse(StreamingResponse):
    """A StreamingResponse sent from the request's own task, which a client's disconnect cancels (closing the
    chunks and the Triton stream under them), its first chunk made before the headers go out so the two are written
    back to back. Starlette's sends the headers, then makes the first chunk, from a second task of an anyio task
    group beside a disconnect listener (ASGI 2.3, as uvicorn speaks it): one more event-loop turn. Chunks are bytes."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with CancelledOnDisconnect(receive):
            await self.stream_response(send)

    async def stream_response(self, send: Send) -> None:
        chunks = aiter(self.body_iterator)
        first = await anext(chunks, None)
        await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
        if first is not None:
            await send({"type": "http.response.body", "body": first, "more_body": True})
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
