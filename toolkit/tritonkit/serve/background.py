"""Background mode: a server that outlives `tritonkit serve`, recorded in the state file for `tritonkit stop`."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tritonkit.errors import TritonkitError
from tritonkit.serve import process
from tritonkit.serve.state import ServerState, clear_state, read_state, state_path, write_state

if TYPE_CHECKING:  # annotations only: `tritonkit stop` does not load the server, its fallbacks and numpy
    from tritonkit.serve.server import EmbeddedServer


def running_state(work_dir: Path) -> ServerState | None:
    """The recorded server if it is still running; a stale state file is removed."""
    return None if take_stale(work_dir) else read_state(work_dir)


def take_stale(work_dir: Path) -> ServerState | None:
    """The recorded server when it no longer runs (killed, crashed, machine restarted); its state file is removed."""
    state = read_state(work_dir)
    if state is None or (process.is_alive(state.pid) and process.is_tritonserver(state.pid)):
        return None
    _forget(work_dir, state)
    return state


def _forget(work_dir: Path, state: ServerState) -> None:
    """Removes a dead server's state file and ends its stubs, which outlive a killed server by seconds."""
    if state.pgid > 1:
        process.kill_triton_leftovers(state.pgid)
    clear_state(work_dir)


def stale_message(work_dir: Path, state: ServerState) -> str:
    """One line naming the dead server, its log and what was done about the state file."""
    return (f"{state_path(work_dir)}: the Triton server it recorded (pid {state.pid}, http {state.host}:"
            f"{state.http_port}) is no longer running; removed the stale state file (server log: {state.log})")


def stale_error(work_dir: Path, state: ServerState) -> TritonkitError:
    """For commands that needed that server: the stale line, and how to go on."""
    return TritonkitError(str(state_path(work_dir)), "", f"the Triton server it recorded (pid {state.pid}, http "
                          f"{state.host}:{state.http_port}) is no longer running (log: {state.log}); the stale state "
                          "file was removed", "start it again (tritonkit serve --background) or pass --url")


def start_background(server: EmbeddedServer) -> ServerState:
    """Starts `server` detached (it must have been made with detach=True) and records it."""
    existing = running_state(server.work_dir)
    if existing is not None:
        raise TritonkitError(str(state_path(server.work_dir)), "", f"a background server is already running "
                             f"(pid {existing.pid}, http {existing.host}:{existing.http_port})",
                             "stop it first: tritonkit stop")
    server.start()
    state = server.state()
    write_state(server.work_dir, state)
    return state


@dataclass(frozen=True)
class Stopped:
    """What `stop_recorded` found and did."""

    state: ServerState
    how: str  # "sigterm", "sigkill" or "exited"


def stop_recorded(work_dir: Path, timeout: float = 20.0) -> Stopped | None:
    """Stops the server recorded in `work_dir`; None when nothing is running there."""
    state = running_state(work_dir)
    if state is None:
        return None
    clear_state(work_dir)  # first, so a foreground `tritonkit serve` knows the exit was asked for
    how = process.terminate(state.pid, pgid=state.pgid, timeout=timeout)
    return Stopped(state, how)
