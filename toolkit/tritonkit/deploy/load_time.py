"""How long Triton took to load this project's models, from the newest `tritonkit serve` log.

The startup probe must outlast the loading (Triton opens its HTTP port only once the models named at
startup have loaded), so its window is derived from a measured load rather than a guess.
"""
import re
from dataclasses import dataclass
from pathlib import Path

from tritonkit.serve.serverlog import read_text
from tritonkit.serve.state import STATE_DIR

#: glog line prefix: severity, MMDD, HH:MM:SS.micros
_STAMP = re.compile(r"^[IWEF]\d{4} (\d\d):(\d\d):(\d\d(?:\.\d+)?) ")
_HTTP_STARTED = "Started HTTPService"
#: Used when the project has no serve log: generous for a few small models; `--load-seconds` sets a real figure.
DEFAULT_LOAD_SECONDS = 60.0


@dataclass(frozen=True)
class LoadTime:
    """Seconds from Triton's first log line to its HTTP endpoint starting, and where that figure came from."""

    seconds: float
    source: str


def logged_load_seconds(log: Path) -> float | None:
    """Load time recorded in one Triton log, or None when the server never opened its HTTP endpoint."""
    first = None
    for line in read_text(log).splitlines():
        m = _STAMP.match(line)
        if not m:
            continue
        stamp = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        first = stamp if first is None else first
        if _HTTP_STARTED in line:
            return (stamp - first) % 86400  # a load across midnight
    return None


def measured_load_time(project_root: Path, override: float | None) -> LoadTime:
    """`--load-seconds` if given, else the newest serve log that recorded a completed load, else the default."""
    if override is not None:
        return LoadTime(override, "--load-seconds")
    logs = (project_root / STATE_DIR / "logs").glob("tritonserver-*.log")
    for log in sorted(logs, key=lambda p: p.stat().st_mtime, reverse=True):
        seconds = logged_load_seconds(log)
        if seconds is not None:
            shown = log.relative_to(project_root).as_posix()
            return LoadTime(round(seconds, 1), f"measured by tritonkit serve ({shown})")
    return LoadTime(DEFAULT_LOAD_SECONDS, "default: no tritonkit serve log in this project; set --load-seconds")
