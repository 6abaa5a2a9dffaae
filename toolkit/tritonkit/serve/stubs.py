"""Python-backend stubs of a running server: which model each belongs to, and reloading a model whose stub died.

Triton 2.51 does not restart a dead stub (measured: after a SIGKILL every request to that model fails with
"Stub process '<model>_0_0' is not healthy." until the model is reloaded), so the foreground server reloads
such a model itself and records the event for `tritonkit smoke`.
"""
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from tritonkit.serve import health, process


@dataclass(frozen=True)
class StubRestart:
    """One dead stub found and its model reloaded (or not: `reloaded` False with Triton's reason)."""

    model: str
    pid: int
    at: float
    reloaded: bool
    seconds: float
    detail: str = ""

    def describe(self) -> str:
        when = time.strftime("%H:%M:%S", time.localtime(self.at))
        then = f"model reloaded in {self.seconds:.1f} s" if self.reloaded else f"reload failed: {self.detail}"
        return f"stub of model '{self.model}' (pid {self.pid}) died at {when}; {then}"


def events_path(log_path: Path) -> Path:
    """Where a server's stub restarts are recorded: beside its log, so the state file leads to them."""
    return log_path.with_name(log_path.stem + ".events.jsonl")


def _children(pid: int) -> list[int]:
    return [child for child in process.pids() if (stat := process.proc_stat(child)) is not None and stat.ppid == pid]


def stub_pids(server_pid: int) -> dict[int, str]:
    """{stub pid: model name} for the live stubs the server started (the stub's first argument is
    `<repository>/<model>/<version>/model.py`)."""
    stubs = {}
    for pid in _children(server_pid):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if args and args[0].endswith(process.STUB_BINARY) and len(args) > 1:
            stubs[pid] = Path(args[1].decode(errors="replace")).parent.parent.name
    return stubs


def _is_zombie(pid: int) -> bool:
    stat = process.proc_stat(pid)
    return stat is not None and stat.state == "Z"


class StubWatch:
    """Remembers the stubs of one server and reloads the models whose stub has gone.

    The stubs are listed again at each poll (a scan of /proc, ~1 ms), so a model loaded through the
    repository API after start is watched too; a zombie's empty command line keeps it off the list."""

    def __init__(self, server_pid: int, http_url: str, events: Path, key_env: str | None = None) -> None:
        self.server_pid, self.http_url, self.events, self.key_env = server_pid, http_url, events, key_env
        self.known = stub_pids(server_pid)

    def heal(self) -> list[StubRestart]:
        """Reloads every model whose stub died unasked and appends the events to the file.

        A stub that died unasked stays a zombie (Triton does not reap it); stubs Triton stops itself, while
        unloading or shutting down, are reaped and vanish, so they are not mistaken for crashes."""
        # listed before the zombies are looked for: a stub that dies in between stays known and is found next poll
        # (listed after, it was dropped unseen, a zombie no later poll looked at, and its model was never reloaded)
        listed = stub_pids(self.server_pid)
        dead = {pid: model for pid, model in self.known.items() if pid not in listed and _is_zombie(pid)}
        restarts = []
        for model in sorted(set(dead.values())):
            pid = min(p for p, m in dead.items() if m == model)
            started = time.monotonic()
            ok, detail = health.reload_model(self.http_url, model, key_env=self.key_env)
            restarts.append(StubRestart(model, pid, time.time(), ok, round(time.monotonic() - started, 2), detail))
        # every poll: stubs of models loaded since (rollout, reloads) too
        self.known = {**listed, **stub_pids(self.server_pid)} if restarts else listed
        if restarts:
            self.events.parent.mkdir(parents=True, exist_ok=True)
            with self.events.open("a") as out:
                for event in restarts:
                    out.write(json.dumps(asdict(event)) + "\n")
        return restarts


def read_events(events: Path) -> list[StubRestart]:
    """The recorded restarts of a server (none when the file is missing or unreadable)."""
    try:
        lines = events.read_text().splitlines()
    except OSError:
        return []
    restarts = []
    for line in lines:
        try:
            restarts.append(StubRestart(**json.loads(line)))
        except (ValueError, TypeError):
            continue
    return restarts
