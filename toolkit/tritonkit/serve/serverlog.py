"""Reading the server log: load progress while Triton starts, and a readable tail when it dies.

Triton answers no API while its models load (its endpoints start afterwards), so the log is the only
source of progress during startup.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

_LOADED = re.compile(r"successfully loaded '([^']+)'")
_FAILED = re.compile(r"failed to load '([^']+)'\"")
#: Server initialization failed (e.g. an unreadable repository); with --exit-on-error=false Triton runs on, empty.
_INIT_FAILED = re.compile(r'^E\S+ \S+ \d+ tritonserver\.cc:\d+\] "(.*)"$')
_PORT_IN_USE = re.compile(r"failed to start (\w+) service: .*Socket '([^']*):(\d+)' already in use")


@dataclass
class LogScan:
    """What the log says so far about loading."""

    loaded: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)


def read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def scan(path: Path) -> LogScan:
    """Models the log reports as loaded or failed (a model reloaded later counts as loaded)."""
    result = LogScan()
    for line in read_text(path).splitlines():
        if m := _LOADED.search(line):
            result.loaded.add(m.group(1))
            result.failed.discard(m.group(1))
        elif m := _FAILED.search(line):
            result.failed.add(m.group(1))
    return result


def port_in_use(path: Path) -> tuple[str, str, int] | None:
    """(endpoint, host, port) when Triton exited because a port was taken."""
    for line in read_text(path).splitlines():
        if m := _PORT_IN_USE.search(line):
            endpoint = {"GRPC": "grpc", "HTTP": "http", "Metrics": "metrics"}.get(m.group(1), m.group(1).lower())
            return endpoint, m.group(2), int(m.group(3))
    return None


def init_error(path: Path) -> str | None:
    """Triton's reason when it could not set up the server (e.g. 'Unable to create S3 filesystem client'); not
    its summary that some model failed to load, which each model's own line explains."""
    for line in read_text(path).splitlines():
        if (m := _INIT_FAILED.search(line)) and not m.group(1).endswith("failed to load all models"):
            return m.group(1)
    return None


def reason_for(path: Path, model: str) -> str | None:
    """Triton's logged reason for a model the repository index lists without one (or not at all),
    such as a config.pbtxt it cannot parse or a model folder without versions."""
    name = re.escape(model)
    pattern = re.compile(rf"(?:Poll failed for model directory '{name}'|failed to load model '{name}'"
                         rf"|failed to load '{name}'(?: version \d+)?): (.*)\"$")
    # An ensemble over a failed model: Triton's line goes on with that model's whole error, named on its own line.
    ensemble = re.compile(rf"ensemble '{name}' (depends on '[^']+' which has no loaded version)")
    found = None
    for line in read_text(path).splitlines():
        if m := pattern.search(line) or ensemble.search(line):
            found = m.group(1)
    return found.replace("\\n", "\n") if found else None


def tail(path: Path, lines: int = 15) -> list[str]:
    """The last meaningful lines: without the ASCII tables Triton prints and without blank lines."""
    kept = [line for line in read_text(path).splitlines() if line.strip() and not line.lstrip().startswith(("+-", "|"))]
    return kept[-lines:]


def one_line(reason: str) -> str:
    """Triton's multi-line reasons (Python tracebacks) as one line: the message, then where it happened."""
    parts = [p.strip() for p in reason.strip().splitlines() if p.strip()]
    if "At:" in parts:
        at = parts.index("At:")
        message, frames = " ".join(parts[:at]), parts[at + 1:]
        return f"{message} (at {frames[0]})" if frames else message  # innermost frame first
    return " ".join(parts)
