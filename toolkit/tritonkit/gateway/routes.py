"""The pipelines the gateway can front, by name: those whose plugin declares routes (each brings its routes and what
it knows of its tensors, in its folder's `gateway/`)."""
from __future__ import annotations

from tritonkit.gateway.catalog import GatewayPipeline
from tritonkit.pipelines.registry import PIPELINES as REGISTERED

PIPELINES: dict[str, GatewayPipeline] = {name: p.gateway() for name, p in REGISTERED.items() if p.gateway is not None}
