"""The echo pipeline as the core sees it: its route and its engine."""
from __future__ import annotations

from collections.abc import Mapping

from tests.pipelines.echo import engine
from tritonkit.plugin.contract import Endpoint, Pipeline, Routes


def _endpoints() -> Mapping[str, Endpoint]:
    from tests.pipelines.echo.routes import ENDPOINTS  # start-up: starlette, when the gateway starts

    return ENDPOINTS


PIPELINE: Pipeline = Pipeline(
    "echo", "answers what it is sent; its engine's slots make it faster",
    gateway=Routes(("/v1/echo",), entry_model="echo", default_id="echo", endpoints=_endpoints,
                   entry_note="the ensemble"),
    tuning=engine.ENGINE,
)
