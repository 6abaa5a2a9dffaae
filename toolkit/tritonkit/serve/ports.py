"""Port choice for the embedded server: free ports when none are given, a clear error when one is taken.

Triton only binds its endpoints after every model has loaded, so a taken port would otherwise surface
many seconds late; checking first gives the error at once.
"""
import ipaddress
import socket
from contextlib import ExitStack

from tritonkit.errors import TritonkitError

#: The three endpoints, in the order of Triton's defaults 8000/8001/8002, with the CLI flag for each.
ENDPOINTS = ("http", "grpc", "metrics")


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Same option Triton uses: a port in TIME_WAIT is reusable, one with a listener is not.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def is_loopback(host: str) -> bool:
    """Whether endpoints bound to `host` are reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def exposure_warning(host: str) -> str | None:
    """One line for a server bound beyond loopback: Triton itself asks no one for credentials."""
    if is_loopback(host):
        return None
    where = "every interface" if host.strip("[]") in ("0.0.0.0", "::") else host
    return (f"warning: --host {host}: HTTP, gRPC and metrics are open on {where} to anyone who can reach this "
            "machine, and Triton has no authentication by default (inference and model load/unload are open); "
            "keep the default 127.0.0.1 behind an authenticating proxy, or deploy with `tritonkit up` / "
            "`tritonkit deploy`, which restrict load/unload to an admin-key header (deploy.admin_key_env)")


def port_taken_error(endpoint: str, host: str, port: int) -> TritonkitError:
    """The one-line error for a taken port, naming the port and the flag that moves it."""
    return TritonkitError(
        f"{host}:{port}", f"--{endpoint}-port", f"port {port} is already in use on {host}",
        f"stop what listens there (a server from `tritonkit serve --background` stops with `tritonkit stop`), "
        f"pass another --{endpoint}-port, or omit it to pick a free port",
    )


def choose_ports(host: str, wanted: dict[str, int | None]) -> dict[str, int]:
    """Checks the given ports and fills the missing ones with distinct free ports."""
    given = [p for p in wanted.values() if p is not None]
    if len(set(given)) != len(given):
        raise TritonkitError("", "--http-port/--grpc-port/--metrics-port",
                             f"the endpoints need distinct ports, got {wanted}", "give each endpoint its own port")
    chosen: dict[str, int] = {}
    with ExitStack() as held:  # hold every socket until all are chosen, so no two picks collide
        for endpoint in ENDPOINTS:
            port = wanted.get(endpoint)
            if port is None:
                continue
            try:
                held.enter_context(_bind(host, port))
            except OSError:
                raise port_taken_error(endpoint, host, port) from None
            chosen[endpoint] = port
        for endpoint in ENDPOINTS:
            if endpoint not in chosen:
                sock = held.enter_context(_bind(host, 0))
                chosen[endpoint] = sock.getsockname()[1]
    return chosen


def no_server(flag: str, url: str, protocol: str) -> TritonkitError:
    """The one line for a command pointed at an endpoint where nothing listens (smoke, perf)."""
    return TritonkitError("", flag, f"no server at {url} ({protocol})",
                          f"start one with `tritonkit serve --background`, or point {flag} at a running server")


def is_listening(host: str, port: int, timeout: float = 0.5) -> bool:
    """Whether something accepts connections on host:port (a name, IPv4 or [IPv6]): confirms ports were
    released, and that a server is there before smoke checks it."""
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=timeout):
            return True
    except OSError:  # refused, unreachable, timed out, or a name that does not resolve
        return False
