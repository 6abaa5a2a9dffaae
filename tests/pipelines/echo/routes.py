"""POST /v1/echo: {"model", "input"} answered with the input, checked as the gateway checks any request."""
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.protocol import OpenAIRequest, Route


class EchoRequest(OpenAIRequest):
    input: str


async def echo(request: Request, body: EchoRequest) -> Response:
    served = await gateway_of(request).served(body.model, "echo")
    return JSONResponse({"object": "echo", "model": served.id, "triton_model": served.model, "output": body.input})


ENDPOINTS = {"/v1/echo": Route(EchoRequest, echo).serve}
