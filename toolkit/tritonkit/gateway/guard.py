"""ASGI middleware in front of every route: API keys (`Authorization: Bearer`) and the request size limit.

Keys are compared in constant time and never logged or echoed; a body over the limit is refused with 413
whether it announces its length or streams chunks past it.
"""
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tritonkit.gateway.errors import ApiError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _send_error(send: Send, error: ApiError, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = json.dumps(error.body()).encode()
    await send({"type": "http.response.start", "status": error.status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class Guard:
    """Refuses requests without a valid key (when keys are set) and bodies larger than `max_bytes`."""

    def __init__(self, app: App, keys: frozenset[str], max_bytes: int) -> None:
        self.app, self.keys, self.max_bytes = app, keys, max_bytes

    def _authorized(self, scope: Scope) -> bool:
        given = _header(scope, b"authorization") or ""
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        token_bytes = token.strip().encode()
        return any(hmac.compare_digest(token_bytes, key.encode()) for key in self.keys)

    def _too_large(self) -> ApiError:
        return ApiError(413, f"the request body is larger than this gateway's limit of {self.max_bytes} bytes "
                             "(gateway.max_request_bytes)", code="request_too_large")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.keys and not self._authorized(scope):
            await _send_error(send, ApiError(401, "Incorrect or missing API key: send 'Authorization: Bearer <key>' "
                                             "with a key this gateway was given", code="invalid_api_key"),
                              ((b"www-authenticate", b"Bearer"),))
            return
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await _send_error(send, self._too_large())
            return
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise self._too_large()  # rendered by the app's ApiError handler
            return message

        await self.app(scope, counted_receive, send)
