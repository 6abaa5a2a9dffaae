"""Where the server under test is: flags, the background server's state file, Triton's default ports.

Triton does not tell its gRPC port over HTTP (nor the reverse), so a missing endpoint is taken from the
server this project started when the given one is that server's, paired by Triton's defaults (8000/8001)
when the given one uses them, and otherwise asked for.
"""
from dataclasses import dataclass
from pathlib import Path

from tritonkit.errors import TritonkitError
from tritonkit.serve.ports import is_listening, no_server
from tritonkit.serve.state import STATE_DIR, read_state

#: Triton's default HTTP and gRPC ports.
DEFAULT_PORTS = {"http": 8000, "grpc": 8001}
_LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass(frozen=True)
class Target:
    """HTTP and gRPC endpoints (host:port) of one Triton server; None for a protocol that is not checked."""

    http_url: str | None
    grpc_url: str | None

    def url(self, protocol: str) -> str:
        url = self.http_url if protocol == "http" else self.grpc_url
        if url is None:
            raise ValueError(f"no {protocol} endpoint resolved")  # resolve_target pairs protocols with URLs
        return url


def _endpoint(url: str) -> tuple[str, str]:
    """(host, port), loopback names made equal so `localhost:P` matches a server recorded as `127.0.0.1:P`."""
    host, _, port = url.rpartition(":")
    return ("loopback" if host in _LOOPBACK else host), port


def same_endpoint(a: str, b: str) -> bool:
    """Whether two host:port strings name the same endpoint (loopback spellings are equal)."""
    return _endpoint(a) == _endpoint(b)


def resolve_target(http_url: str | None, grpc_url: str | None, protocols: list[str],
                   project_dir: Path = Path(".")) -> Target:
    """Both URLs given win; else the background server of this project fills in (or matches) them; else defaults.

    Raises a one-line error when one URL is given, the other is needed for `protocols` and cannot be known.
    """
    state = read_state(project_dir / STATE_DIR)
    recorded = {"http": f"{state.host}:{state.http_port}", "grpc": f"{state.host}:{state.grpc_port}"} if state else None
    given = {"http": http_url, "grpc": grpc_url}
    url = http_url or grpc_url
    if url is None:
        urls = recorded or {p: f"localhost:{port}" for p, port in DEFAULT_PORTS.items()}
        return Target(urls["http"], urls["grpc"])
    known, missing = ("http", "grpc") if http_url else ("grpc", "http")
    if given[missing] is None and missing in protocols:
        given[missing] = _pair(url, known, missing, recorded)
    return Target(given["http"], given["grpc"])


def require_server(target: Target, protocols: list[str]) -> None:
    """Raises one located line when nothing accepts connections at an endpoint to check: a table of failed rows
    would only say "connection refused" in two clients' words."""
    for protocol in protocols:
        url = target.url(protocol)
        host, _, port = url.rpartition(":")
        if port.isdigit() and not is_listening(host, int(port), timeout=5.0):
            flag = "--url" if protocol == "http" else "--grpc-url"
            raise no_server(flag, url, protocol)


def _pair(url: str, known: str, missing: str, recorded: dict[str, str] | None) -> str:
    """The `missing` endpoint of the server at `url`: the recorded server's, or Triton's default pairing."""
    if recorded is not None and _endpoint(recorded[known]) == _endpoint(url):
        return recorded[missing]
    host, port = url.rpartition(":")[0], _endpoint(url)[1]
    if port == str(DEFAULT_PORTS[known]):
        return f"{host}:{DEFAULT_PORTS[missing]}"
    flag = "--grpc-url" if missing == "grpc" else "--url"
    raise TritonkitError(f"--{'url' if known == 'http' else 'grpc-url'} {url}", "",
                         f"the {missing} endpoint of this server is unknown (not the background server of this "
                         f"project, not Triton's default port {DEFAULT_PORTS[known]})",
                         f"pass {flag} HOST:PORT, or --protocol {known} to run the {known.upper()} checks only")
