"""Finds the Triton servers `tritonkit serve` runs: this project's from its state file, or every one on the machine.

A server started by `tritonkit serve` (background or foreground) runs in the project folder it was started in
and is recorded in that folder's `.tritonkit/server.json`; so every server on the machine is found from the
process table: each tritonserver process whose working folder records that very pid. Models and their states
come from the server's repository index, uptime from the process's start time.
"""
import os
import time
from dataclasses import dataclass
from pathlib import Path

from tritonkit.serve import health, process
from tritonkit.serve.background import running_state
from tritonkit.serve.state import STATE_DIR, ServerState, read_state


@dataclass(frozen=True)
class RunningServer:
    """A recorded, running server; `models` is None when its repository index did not answer."""

    project: Path
    state: ServerState
    uptime_s: float
    models: list[health.ModelStatus] | None

    def as_dict(self) -> dict:
        s = self.state
        return {"project": str(self.project), "pid": s.pid, "host": s.host, "http_port": s.http_port,
                "grpc_port": s.grpc_port, "metrics_port": s.metrics_port, "uptime_s": round(self.uptime_s, 1),
                "repository": s.repository, "log": s.log,
                "models": None if self.models is None else
                [{"name": m.name, "version": m.version, "state": m.state, "ready": m.ready} for m in self.models]}


def describe(project: Path, state: ServerState) -> RunningServer:
    """The server as it is now: uptime and the repository index's models."""
    started = process.start_time(state.pid)
    uptime = time.time() - started if started is not None else 0.0
    return RunningServer(project, state, uptime, health.repository_index(f"{state.host}:{state.http_port}"))


def project_server(project: Path) -> RunningServer | None:
    """This project's running server (a stale state file is removed, as `tritonkit stop` does)."""
    state = running_state(project / STATE_DIR)
    return describe(project, state) if state is not None else None


def machine_servers() -> list[RunningServer]:
    """Every running tritonserver that a `tritonkit serve` recorded in its project folder, oldest first."""
    found = []
    for pid in process.tritonserver_pids():
        try:
            project = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:  # another user's process, or gone meanwhile
            continue
        state = read_state(project / STATE_DIR)
        if state is not None and state.pid == pid:
            found.append(describe(project, state))
    return sorted(found, key=lambda s: -s.uptime_s)
