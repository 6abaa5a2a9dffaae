"""Stopping a server process we started, whether we are its parent or a later `tritonkit stop`.

Triton is started in its own process group, so the Python-backend stubs it spawns can be killed with it
when SIGTERM is not enough (a server holding rescheduled requests has been seen ignoring SIGTERM).
"""
import contextlib
import ctypes
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

_PR_SET_PDEATHSIG = 1
TRITONSERVER = b"tritonserver"
STUB_BINARY = b"triton_python_backend_stub"


class ProcStat(NamedTuple):
    """The fields of /proc/<pid>/stat that server and stub handling look at."""

    state: str  # "R", "S", ... ; "Z" for a zombie (exited, not yet reaped by its parent)
    ppid: int
    pgid: int


def proc_stat(pid: int) -> ProcStat | None:
    """State, parent and group of `pid`, None when it is gone.

    The command name in parentheses may itself hold spaces or ")", so the fields are those after the last ")".
    """
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return ProcStat(fields[0], int(fields[1]), int(fields[2]))


def die_with_parent() -> None:
    """Runs in the child before exec: SIGTERM it when the parent dies, so no server is left orphaned."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def is_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie (exited, not yet reaped by its parent) counts as gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = proc_stat(pid)
    return stat is not None and stat.state != "Z"


def program(pid: int) -> bytes:
    """The program `pid` runs (argv[0]); empty when it is gone or a zombie."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


def is_tritonserver(pid: int) -> bool:
    """Guards against a recycled pid: the process must still be a tritonserver."""
    return program(pid).endswith(TRITONSERVER)


def pids() -> list[int]:
    """Every process on the machine."""
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def tritonserver_pids() -> list[int]:
    """Every running tritonserver process on the machine (`tritonkit status --all`)."""
    return [pid for pid in pids() if is_tritonserver(pid) and is_alive(pid)]


def start_time(pid: int) -> float | None:
    """When `pid` started (seconds since the epoch): boot time plus its start tick (/proc/<pid>/stat field 22)."""
    try:
        ticks = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        lines = Path("/proc/stat").read_text().splitlines()
        boot = next(int(line.split()[1]) for line in lines if line.startswith("btime "))
    except (OSError, IndexError, ValueError, StopIteration):
        return None
    return boot + ticks / os.sysconf("SC_CLK_TCK")


def kill_triton_leftovers(pgid: int) -> list[int]:
    """SIGKILLs what is left of a dead server's process group: its stubs live on for seconds after the server
    is killed. Only tritonserver and stub processes are hit, and none while the group's leader (the server) runs
    again under that pid: a group id reused since, even by another project's server, is left alone."""
    killed: list[int] = []
    if is_alive(pgid):
        return killed
    for pid in pids():
        stat = proc_stat(pid)
        if stat is None or stat.pgid != pgid or not program(pid).endswith((TRITONSERVER, STUB_BINARY)):
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


def describe_exit(returncode: int | None) -> str:
    """`exit code 1` or `signal 9 (SIGKILL)`, for messages."""
    if returncode is None:
        return "an unknown status"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "unknown"
        return f"signal {-returncode} ({name})"
    return f"exit code {returncode}"


def _wait_gone(pid: int, proc: subprocess.Popen | None, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _running(pid, proc):
            return True
        time.sleep(0.1)
    return False


def _signal_group(pgid: int | None, pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        if pgid is not None and pgid > 1:
            os.killpg(pgid, sig)
        else:
            os.kill(pid, sig)


def terminate(pid: int, *, pgid: int | None = None, proc: subprocess.Popen | None = None, timeout: float = 20.0) -> str:
    """SIGTERM, wait up to `timeout`, then SIGKILL the process group.

    Returns how it ended: "exited" (already gone), "sigterm" or "sigkill".
    """
    if not _running(pid, proc):
        if pgid is not None:
            _signal_group(pgid, pid, signal.SIGKILL)  # stubs of a server that died on its own
        return "exited"
    _signal_group(None, pid, signal.SIGTERM)  # the server alone: it shuts its stubs down itself
    how = "sigterm" if _wait_gone(pid, proc, timeout) else "sigkill"
    if pgid is not None:
        _signal_group(pgid, pid, signal.SIGKILL)  # whatever is left of the group (stray stubs)
    if how == "sigkill":
        _signal_group(None, pid, signal.SIGKILL)
        _wait_gone(pid, proc, 10.0)
    return how


def _running(pid: int, proc: subprocess.Popen | None) -> bool:
    return proc.poll() is None if proc is not None else is_alive(pid)
