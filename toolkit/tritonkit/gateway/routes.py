"""The pipelines the gateway can front: those whose plugin declares routes (in its folder's `gateway/`)."""
from functools import cache

from tritonkit.gateway.catalog import GatewayPipeline
from tritonkit.pipelines.registry import PIPELINES


@cache
def gateway_pipelines() -> dict[str, GatewayPipeline]:
    """By name; loaded on first use, as their routes import the app that asks for them."""
    return {name: p.gateway() for name, p in PIPELINES.items() if p.gateway is not None}
