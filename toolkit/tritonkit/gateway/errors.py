"""Errors in OpenAI's JSON shape (`{"error": {"message", "type", "param", "code"}}`) with their HTTP status."""
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
    """Triton's answer as OpenAI's: a model that cannot be reached is a 503; a refusal the model itself sent
    (INVALID_ARG, or an error response on a stream, which carries no status) is the client's 400; else a 500."""
    status, text = str(exc.status() or ""), exc.message() or ""
    message = f"model '{model}': {text}"
    if any(s in f"{status} {text}" for s in ("UNAVAILABLE", "NOT_FOUND", "is not found", "not ready", "unavailable")):
        return ApiError(503, message, kind="server_error", code="model_unavailable")
    if "INVALID_ARG" in status or not status:
        return ApiError(400, message, code="invalid_value")
    return ApiError(500, message, kind="server_error")
