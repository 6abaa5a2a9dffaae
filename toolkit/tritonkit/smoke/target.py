"""Where the server under test is: flags, else the background server's state file, else localhost defaults."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tritonkit.serve.state import STATE_DIR, read_state


@dataclass(frozen=True)
class Target:
    """HTTP and gRPC endpoints (host:port) of one Triton server."""

    http_url: str
    grpc_url: str


def resolve_target(http_url: str | None, grpc_url: str | None, project_dir: Path = Path(".")) -> Target:
    """Explicit URLs win; a `tritonkit serve --background` server in this project comes next; then 8000/8001."""
    state = read_state(project_dir / STATE_DIR)
    if state is not None and not (http_url or grpc_url):
        return Target(f"{state.host}:{state.http_port}", f"{state.host}:{state.grpc_port}")
    http = http_url or "localhost:8000"
    if grpc_url is None:
        host = http.rsplit(":", 1)[0]
        grpc_url = f"{host}:8001"
    return Target(http, grpc_url)
