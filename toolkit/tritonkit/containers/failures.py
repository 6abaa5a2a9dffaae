"""Names why a compose deployment did not come up, from the engine's output and the container's log.

A bind mount whose source does not exist is caught before anything starts: compose engines create the missing folder,
and Triton then serves an empty repository and reports healthy. The engine's output names a published port that is
taken; Triton's own log, read with the embedded server's log reader, names the models that failed to load and why.
"""
import re
from pathlib import Path

import yaml

from tritonkit.errors import Problem
from tritonkit.serve import serverlog

_PORT_TAKEN = re.compile(r"listen tcp[46]? (\S+):(\d+): bind: address already in use")


def missing_mounts(files: list[Path]) -> list[Problem]:
    """Bind-mount sources that do not exist, per service and container path, the last compose file winning.

    Relative sources are relative to the first file's folder, as compose resolves them.
    """
    base = files[0].absolute().parent
    sources: dict[tuple[str, str], tuple[Path, str]] = {}
    for path in files:
        document = yaml.safe_load(path.read_text()) or {}
        for service, spec in (document.get("services") or {}).items():
            for volume in (spec or {}).get("volumes") or []:
                parts = volume.split(":") if isinstance(volume, str) else []
                if len(parts) >= 2 and parts[0].startswith((".", "/", "~")) and "$" not in parts[0]:
                    sources[(service, parts[1])] = (path, parts[0])
    return [Problem(str(path), f"services.{service}.volumes", f"mount source {source} does not exist (compose would "
                    "create it empty and Triton would serve no models)", "build the repository first (tritonkit build) "
                    "or correct the path") for (service, _), (path, source) in sorted(sources.items())
            if not (base / Path(source).expanduser()).exists()]


def from_engine(compose_file: Path, output: str) -> list[Problem]:
    """Problems the engine's `up` output names (a published port that is taken)."""
    where = str(compose_file)
    problems = [Problem(where, "ports", f"port {m.group(2)} on {m.group(1)} is already in use",
                         "stop what listens there, or change deploy.*_port in tritonkit.yaml and rebuild")
                 for m in _PORT_TAKEN.finditer(output)]
    return list({p.line(): p for p in problems}.values())


def engine_error(output: str) -> str:
    """The engine's own error in its `up` output: its first line that starts with "Error" (the cause: podman-compose
    goes on to the services it could not start, "Error: no container with name ... found"), else its last line
    that says error, else its last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    first = [line for line in lines if line.startswith("Error")]
    errors = [line for line in lines if "error" in line.lower()]
    return first[0] if first else (errors or lines or ["no output"])[-1]


def from_triton_log(compose_file: Path, container: str, log: Path) -> list[Problem]:
    """Problems Triton logged in a container that exited: models that failed to load, a taken port."""
    where = str(compose_file)
    problems = []
    for model in sorted(serverlog.scan(log).failed):
        reason = serverlog.reason_for(log, model)
        problems.append(Problem(where, f"services.triton ({container})", f"model '{model}' failed to load: "
                                f"{serverlog.one_line(reason) if reason else 'see the log'}",
                                f"fix the model, rebuild, and read {log}"))
    taken = serverlog.port_in_use(log)
    if taken:
        endpoint, host, port = taken
        problems.append(Problem(where, "command", f"Triton's {endpoint} port {port} on {host} is already in "
                                "use inside the container", "give each endpoint its own port"))
    return problems
