"""POST /v1/echo: {"model", "input"} answered with the input, checked as the gateway checks any request."""
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tritonkit.gateway.app import gateway_of
from tritonkit.gateway.params import Body


async def echo(request: Request) -> Response:
    body = Body.parse(await request.body())
    body.check_names({"model", "input"}, {})
    served = await gateway_of(request).served(body.get("model"), "echo")
    return JSONResponse({"object": "echo", "model": served.id, "triton_model": served.model,
                         "output": body.get("input")})


ENDPOINTS = {"/v1/echo": echo}
