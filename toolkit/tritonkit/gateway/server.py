"""Running the gateway: API keys from the environment or a file, the exposure warning, uvicorn."""
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tritonkit.errors import TritonkitError
from tritonkit.gateway.catalog import GatewayConfig, Served
from tritonkit.gateway.heap import keep_large_buffers
from tritonkit.plugin.contract import Routes
from tritonkit.serve.ports import is_loopback
from tritonkit.spec.gateway import GatewaySpec


def api_keys(env: str, file: Path | None) -> frozenset[str]:
    """Keys from the variable `env` (comma-separated) and from `file` (one a line; # comments); never logged."""
    keys = {k.strip() for k in os.environ.get(env, "").split(",") if k.strip()}
    if file is not None:
        try:
            lines = file.read_text().splitlines()
        except OSError as exc:
            raise TritonkitError(str(file), "--api-key-file", f"cannot read the API key file ({exc.strerror})",
                                 "point it at a readable file with one key a line") from None
        keys |= {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")}
    return frozenset(keys)


def exposure_warning(host: str, keys: frozenset[str]) -> str | None:
    """One line for a gateway bound beyond loopback (as `serve` warns for Triton), sharper without keys."""
    if is_loopback(host):
        return None
    where = "every interface" if host.strip("[]") in ("0.0.0.0", "::") else host
    guard = ("requests need one of its API keys" if keys else "and no API key is set, so anyone who can reach this "
             "machine can use the models (set gateway.api_key_env's variable or --api-key-file)")
    return f"warning: --host {host}: the OpenAI gateway is open on {where}; {guard}"


def config_of(spec: GatewaySpec, pipelines: Mapping[str, Routes], triton_url: str, repository: str,
              key_file: Path | None) -> GatewayConfig:
    """The app's settings from the spec section and the command line (the command line wins); `pipelines`: those
    with routes, by name."""
    models = tuple(Served(name, m.pipeline, m.model or pipelines[m.pipeline].entry_model)
                   for name, m in spec.models.items())
    file = key_file or (Path(spec.api_key_file) if spec.api_key_file else None)
    return GatewayConfig(triton_url=triton_url, pipelines=pipelines, repository=repository, models=models,
                         api_keys=api_keys(spec.api_key_env, file), max_request_bytes=spec.max_request_bytes)


def run(config: GatewayConfig, host: str, port: int) -> None:
    """Serves until interrupted (uvicorn handles SIGINT/SIGTERM)."""
    from tritonkit.gateway.app import create_app  # start-up: starlette (the gateway extra), when it runs

    serve_app(create_app(config), host, port)


def serve_app(app: Any, host: str, port: int) -> None:
    """uvicorn as the gateway runs it: uvloop and httptools where installed (uvicorn's "auto"), no access log, large
    buffers kept in the heap between requests (gateway/heap.py)."""
    import uvicorn

    keep_large_buffers()

    uvicorn.run(app, host=host.strip("[]"), port=port, log_level="warning", access_log=False,
                timeout_graceful_shutdown=5)
