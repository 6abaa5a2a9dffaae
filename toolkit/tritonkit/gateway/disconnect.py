"""Work that stops when its HTTP client goes away: a disconnected client cancels its Triton request."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from starlette.requests import Request

from tritonkit.gateway.errors import ApiError

T = TypeVar("T")


async def _disconnected(request: Request) -> None:
    while (await request.receive())["type"] != "http.disconnect":
        pass


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """`work`'s result, or `work` cancelled (and its Triton stream with it) once the client disconnects."""
    task: asyncio.Future[Any] = asyncio.ensure_future(work)
    watcher: asyncio.Future[Any] = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait([task, watcher], return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        result: T = task.result()
        return result
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    raise ApiError(499, "the client closed the request", code="client_closed_request")
