"""The small state file that lets later processes (`tritonkit stop`, `smoke`, `perf`) find a background server.

It lives in the project (`.tritonkit/server.json`) rather than in a global place, so each project stops its own server.
"""
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

STATE_DIR = ".tritonkit"
STATE_FILE = "server.json"


@dataclass(frozen=True)
class ServerState:
    """Everything needed to reach or stop a server started earlier."""

    pid: int
    pgid: int
    host: str
    http_port: int
    grpc_port: int
    metrics_port: int
    log: str
    repository: str
    serving_repository: str


def state_path(work_dir: Path) -> Path:
    return work_dir / STATE_FILE


def write_state(work_dir: Path, state: ServerState) -> Path:
    """Writes the state file atomically (a reader never sees half a file)."""
    path = state_path(work_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=2) + "\n")
    os.replace(tmp, path)
    return path


def read_state(work_dir: Path) -> ServerState | None:
    """The recorded server, or None when there is no (readable) state file."""
    try:
        data = json.loads(state_path(work_dir).read_text())
        return ServerState(**data)
    except (OSError, ValueError, TypeError):
        return None


def clear_state(work_dir: Path) -> None:
    state_path(work_dir).unlink(missing_ok=True)
