"""The ASGI app: the pipelines' routes plus /v1/models, errors in OpenAI's shape, keys and size limits in front."""
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tritonkit.gateway.catalog import GatewayConfig, Served, default_catalog
from tritonkit.gateway.errors import ApiError
from tritonkit.gateway.guard import Guard
from tritonkit.gateway.triton import Triton

log = logging.getLogger("tritonkit.gateway")
CREATED = int(time.time())


class Gateway:
    """The app's state: the Triton client, the catalog, and per-model caches the pipelines fill (e.g. tokenizers)."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self._triton: Triton | None = None
        self._catalog: tuple[Served, ...] = config.models
        self.cache: dict[tuple[str, str], Any] = {}

    @property
    def triton(self) -> Triton:
        """The client, made inside the server's event loop (gRPC's asyncio channel belongs to one loop)."""
        if self._triton is None:
            self._triton = Triton(self.config.triton_url)
        return self._triton

    async def close(self) -> None:
        if self._triton is not None:
            await self._triton.close()

    async def catalog(self) -> tuple[Served, ...]:
        """The spec's model ids, else every pipeline whose entry model Triton serves (asked until one is)."""
        if not self._catalog:
            self._catalog = default_catalog(self.config.pipelines, await self.triton.ready_models())
            log.info("gateway models: %s", ", ".join(f"{s.id} ({s.pipeline})" for s in self._catalog) or "none yet")
        return self._catalog

    async def served(self, model_id: object, pipeline: str) -> Served:
        """The catalog entry `model_id` names, which must be served by `pipeline`; else OpenAI's 404 or a 400."""
        if not isinstance(model_id, str) or not model_id:
            raise ApiError(400, "'model' is required", "model", "missing_required_parameter")
        catalog = await self.catalog()
        for served in catalog:
            if served.id == model_id:
                if served.pipeline != pipeline:
                    others = ", ".join(s.id for s in catalog if s.pipeline == pipeline) or "none here"
                    raise ApiError(400, f"model '{model_id}' is a {served.pipeline} model; this route needs a "
                                   f"{pipeline} model ({others})", "model", "model_not_supported")
                return served
        raise ApiError(404, f"The model '{model_id}' does not exist; this gateway serves: "
                       f"{', '.join(s.id for s in catalog) or 'nothing (no pipeline model is ready in Triton)'}",
                       "model", "model_not_found")


def gateway_of(request: Request) -> Gateway:
    gateway = request.app.state.gateway
    assert isinstance(gateway, Gateway)
    return gateway


def _model_entry(served: Served) -> dict[str, Any]:
    return {"id": served.id, "object": "model", "created": CREATED, "owned_by": f"tritonkit-{served.pipeline}"}


async def list_models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [_model_entry(s) for s in await gateway_of(request).catalog()]})


async def get_model(request: Request) -> Response:
    model_id = request.path_params["model_id"]
    for served in await gateway_of(request).catalog():
        if served.id == model_id:
            return JSONResponse(_model_entry(served))
    raise ApiError(404, f"The model '{model_id}' does not exist", "model", "model_not_found")


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _internal(request: Request, exc: Exception) -> Response:
    """A failure of the gateway itself: logged with its traceback, answered as OpenAI's 500 naming it."""
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return ApiError(500, f"the gateway failed: {type(exc).__name__}: {exc}", kind="server_error").response()


async def _not_found(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 404)
    return ApiError(status, f"{request.method} {request.url.path}: {getattr(exc, 'detail', 'not found')}",
                    code="not_found" if status == 404 else None).response()


def create_app(config: GatewayConfig) -> Guard:
    """The gateway as an ASGI app (uvicorn runs it; tests may too): /v1/models and each of `config.pipelines`'
    routes."""
    gateway = Gateway(config)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        with contextlib.suppress(ApiError):   # Triton not reached yet: every request's 503 says so
            await gateway.catalog()
        yield
        await gateway.close()

    routes = [Route("/v1/models", list_models, methods=["GET"]),
              Route("/v1/models/{model_id:path}", get_model, methods=["GET"])]
    for pipeline in config.pipelines.values():
        endpoints = pipeline.endpoints()
        routes += [Route(path, endpoints[path], methods=["POST"]) for path in pipeline.paths]
    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={ApiError: _api_error, 404: _not_found, 405: _not_found, Exception: _internal})
    app.state.gateway = gateway
    return Guard(app, config.api_keys, config.max_request_bytes)
