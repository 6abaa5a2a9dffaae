"""Runs a generated compose file with whichever engine this machine has, and waits for its healthchecks.

Engines, in order of preference: `docker compose`, `docker-compose`, `podman-compose`; one counts only when
its container runtime answers (a docker client without a daemon does not). The compose project name is
always passed (`-p`), so containers are found by their project label whatever the engine prints.
Health is the container's own healthcheck: docker reports it in `inspect`; podman without systemd runs
no healthcheck timers, so `podman healthcheck run` is polled instead.
"""
import json
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tritonkit.errors import TritonkitError


@dataclass(frozen=True)
class Engine:
    """A compose implementation and the container runtime it drives."""

    name: str
    command: tuple[str, ...]
    runtime: str
    #: Label holding the compose project name on the containers this engine creates.
    project_label: str

    def compose(self, files: Sequence[Path], project: str, *args: str) -> list[str]:
        """argv of `ENGINE -f FILE... -p PROJECT ARGS`."""
        options = [item for f in files for item in ("-f", str(f))]
        return [*self.command, *options, "-p", project, *args]


ENGINES = (
    Engine("docker compose", ("docker", "compose"), "docker", "com.docker.compose.project"),
    Engine("docker-compose", ("docker-compose",), "docker", "com.docker.compose.project"),
    Engine("podman-compose", ("podman-compose",), "podman", "io.podman.compose.project"),
)


def _answers(argv: Sequence[str]) -> bool:
    try:
        return subprocess.run(list(argv), capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def find_engine(name: str | None = None) -> Engine:
    """The first engine whose command exists and whose runtime answers (or the one named), else an error."""
    candidates = [e for e in ENGINES if name in (None, e.name)]
    for engine in candidates:
        if not shutil.which(engine.command[0]) or not shutil.which(engine.runtime):
            continue
        if engine.command == ("docker", "compose") and not _answers(["docker", "compose", "version"]):
            continue
        if _answers([engine.runtime, "info"]):
            return engine
    wanted = name or " or ".join(e.name for e in ENGINES)
    raise TritonkitError("compose", "engine", f"no working {wanted} on this machine (the command is missing or its "
                         "container runtime does not answer `info`)",
                         "install Docker with the compose plugin, or podman and podman-compose")


def project_name(compose_file: Path) -> str:
    """The compose project name for a file: its folder's name as compose normalizes it."""
    name = re.sub(r"[^a-z0-9_-]", "", compose_file.absolute().parent.name.lower()).lstrip("_-")
    return name or "tritonkit"


@dataclass(frozen=True)
class Container:
    """One container of the project, as `inspect` reports it."""

    id: str
    name: str
    status: str
    exit_code: int
    has_healthcheck: bool
    #: Times the engine restarted it (`restart: unless-stopped` brings back a server that exited).
    restarts: int


def _labelled(engine: Engine, project: str, kind: str) -> list[str]:
    """Ids or names of the project's objects of `kind` (container, network, volume, pod), stopped containers too."""
    listing = [kind, "ls", "-a"] if kind == "container" else [kind, "ls"]
    return subprocess.run([engine.runtime, *listing, "-q", "--filter", f"label={engine.project_label}={project}"],
                          capture_output=True, text=True).stdout.split()


def containers(engine: Engine, project: str) -> list[Container]:
    ids = _labelled(engine, project, "container")
    if not ids:
        return []
    proc = subprocess.run([engine.runtime, "inspect", *ids], capture_output=True, text=True)
    found = []
    for item in json.loads(proc.stdout or "[]"):
        state: dict[str, Any] = item.get("State") or {}
        check = (item.get("Config") or {}).get("Healthcheck") or {}
        found.append(Container(item["Id"], item["Name"].lstrip("/"), state.get("Status", ""),
                               int(state.get("ExitCode") or 0), bool(check.get("Test")),
                               int(item.get("RestartCount") or 0)))
    return found


def is_healthy(engine: Engine, container: Container) -> bool:
    if engine.runtime == "podman":
        return _answers(["podman", "healthcheck", "run", container.id])
    proc = subprocess.run(["docker", "inspect", "-f", "{{.State.Health.Status}}", container.id],
                          capture_output=True, text=True)
    return proc.stdout.strip() == "healthy"


def save_logs(engine: Engine, container: Container, log_dir: Path) -> Path:
    """The container's output written to `log_dir/<name>.log` (it is gone once the container is removed)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    path = log_dir / f"{container.name}.log"
    with open(path, "w") as out:
        subprocess.run([engine.runtime, "logs", container.id], stdout=out, stderr=subprocess.STDOUT)
    return path


def wait_healthy(engine: Engine, project: str, timeout: float,
                 progress: Callable[[str], None]) -> list[Container]:
    """Waits until every container with a healthcheck is healthy and the others ran or exited cleanly.

    Returns the containers; raises `Unhealthy` naming the container that exited, or the ones still
    unhealthy at the timeout.
    """
    started = time.monotonic()
    last_report = 0.0
    while True:
        current = containers(engine, project)
        if not current:
            raise Unhealthy([], "the engine created no container of the project")
        exited = [c for c in current if (c.status in ("exited", "dead", "stopped") or c.restarts) and
                  (c.has_healthcheck or c.exit_code != 0)]
        if exited:
            first = exited[0]
            how = f"was restarted {first.restarts} times" if first.restarts else "exited"
            raise Unhealthy(exited, f"container {first.name} {how} (exit code {first.exit_code})")
        created = [c for c in current if c.status in ("created", "configured")]
        waiting = [c for c in current if c.has_healthcheck and not is_healthy(engine, c)]
        elapsed = time.monotonic() - started
        if not waiting and not created:
            progress(f"healthy after {elapsed:.0f} s: {', '.join(c.name for c in current)}")
            return current
        if elapsed > timeout:
            stuck = created + waiting
            state = "was never started" if created else f"is not healthy after {timeout:.0f} s"
            raise Unhealthy(stuck, f"container {stuck[0].name} {state}")
        if elapsed - last_report >= 5:
            last_report = elapsed
            progress(f"waiting for {', '.join(c.name for c in waiting + created)} ({elapsed:.0f} s)")
        time.sleep(1)


class Unhealthy(Exception):
    """The deployment did not become healthy; `containers` are the ones at fault."""

    def __init__(self, faulty: list[Container], message: str) -> None:
        super().__init__(message)
        self.containers = faulty


def down(engine: Engine, files: Sequence[Path], project: str) -> None:
    """`down` through the engine, then removes whatever it left of the project (containers, pods, networks)."""
    subprocess.run(engine.compose(files, project, "down", "-v"), capture_output=True)
    left = [c.id for c in containers(engine, project)]
    if left:
        subprocess.run([engine.runtime, "rm", "-f", *left], capture_output=True)
    for kind in ("network", "pod") if engine.runtime == "podman" else ("network",):
        names = _labelled(engine, project, kind)
        if names:
            subprocess.run([engine.runtime, kind, "rm", "-f", *names], capture_output=True)


def leftovers(engine: Engine, project: str) -> list[str]:
    """`kind name` of every container, network, volume (and podman pod) the project still has."""
    kinds = ("container", "network", "volume") + (("pod",) if engine.runtime == "podman" else ())
    return [f"{kind} {name}" for kind in kinds for name in _labelled(engine, project, kind)]
