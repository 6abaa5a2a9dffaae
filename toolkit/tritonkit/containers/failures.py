"""Names why a compose deployment did not come up, from the engine's output and the container's log.

The engine reports what stopped a container from starting (a mount source that does not exist, a
published port that is taken); Triton's own log, read with the embedded server's log reader, names the
models that failed to load and why.
"""
from __future__ import annotations

import re
from pathlib import Path

from tritonkit.errors import Problem
from tritonkit.serve import serverlog

_MISSING_MOUNT = re.compile(r"statfs (\S+): no such file or directory")
_PORT_TAKEN = re.compile(r"listen tcp[46]? (\S+):(\d+): bind: address already in use")


def from_engine(compose_file: Path, output: str) -> list[Problem]:
    """Problems the engine's `up` output names (a missing mount source, a taken port)."""
    where = str(compose_file)
    problems = [Problem(where, "volumes", f"mount source {m.group(1)} does not exist",
                        "build the repository first (tritonkit build) or correct the volume's path")
                for m in _MISSING_MOUNT.finditer(output)]
    problems += [Problem(where, "ports", f"port {m.group(2)} on {m.group(1)} is already in use",
                         "stop what listens there, or change deploy.*_port in tritonkit.yaml and rebuild")
                 for m in _PORT_TAKEN.finditer(output)]
    return _unique(problems)


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
        problems.append(Problem(where, "command", f"Triton's {endpoint} port {port} on {host} is already in use "
                                "inside the container", "give each endpoint its own port"))
    return problems


def _unique(problems: list[Problem]) -> list[Problem]:
    seen: dict[str, Problem] = {}
    for p in problems:
        seen.setdefault(p.line(), p)
    return list(seen.values())
