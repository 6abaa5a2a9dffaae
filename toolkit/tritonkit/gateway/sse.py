"""Server-sent events as OpenAI streams them: `data: <json>` lines, errors as an `error` object, then `[DONE]`."""
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from tritonkit.gateway.disconnect import CancelledOnDisconnect
from tritonkit.gateway.errors import ApiError

DONE = b"data: [DONE]\n\n"


def event(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


class EventStream(StreamingResponse):
    """Sends its events from the request's own task, which a client's disconnect cancels (closing the events and
    the Triton stream under them). Starlette's StreamingResponse (ASGI spec 2.3, as uvicorn speaks it) sends from a
    second task of an anyio task group beside a disconnect listener: one more event-loop turn before the first event."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with CancelledOnDisconnect(receive):
            await self.stream_response(send)


def sse_response(events: AsyncIterator[bytes]) -> StreamingResponse:
    """A text/event-stream; an ApiError while streaming becomes an error event (the status is sent already)."""

    async def guarded() -> AsyncIterator[bytes]:
        try:
            async for chunk in events:
                yield chunk
        except ApiError as exc:
            yield event(exc.body())

    return EventStream(guarded(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
