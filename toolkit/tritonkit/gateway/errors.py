"""Errors in OpenAI's JSON shape (`{"error": {"message", "type", "param", "code"}}`) with their HTTP status."""
from __future__ import annotations

from starlette.responses import JSONResponse
from tritonclient.utils import InferenceServerException


class ApiError(Exception):
    """A request the gateway refuses or could not serve; rendered once, by the app's exception handler."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None,
                 kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind = status, message, param, code, kind

    def body(self) -> dict[str, dict[str, str | None]]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param, code)


def from_triton(exc: InferenceServerException, model: str) -> ApiError:
    """Triton's refusal as the client's 400 (INVALID_ARG: the request is wrong), else a 503 (unavailable) or 500."""
    status = str(exc.status() or "")
    message = f"model '{model}': {exc.message()}"
    if "INVALID_ARG" in status or "invalid" in (exc.message() or "").lower():
        return ApiError(400, message, code="invalid_value")
    if "UNAVAILABLE" in status or "not found" in (exc.message() or "") or "not ready" in (exc.message() or ""):
        return ApiError(503, message, kind="server_error", code="model_unavailable")
    return ApiError(500, message, kind="server_error")
