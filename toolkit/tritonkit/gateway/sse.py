"""Server-sent events as OpenAI streams them: `data: <json>` lines, errors as an `error` object, then `[DONE]`."""
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import StreamingResponse

from tritonkit.gateway.disconnect import StreamedResponse
from tritonkit.gateway.errors import ApiError

DONE = b"data: [DONE]\n\n"


def event(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


def sse_response(events: AsyncIterator[bytes]) -> StreamingResponse:
    """A text/event-stream; an ApiError while streaming becomes an error event (the status is sent already)."""

    async def guarded() -> AsyncIterator[bytes]:
        try:
            async for chunk in events:
                yield chunk
        except ApiError as exc:
            yield event(exc.body())

    return StreamedResponse(guarded(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
