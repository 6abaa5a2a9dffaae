"""What answers at the gRPC address the gateway is given, asked once before it starts: nothing (it says so and starts
anyway, since Triton may come up later, as in a pod whose containers start together), or an HTTP/1.1 server, Triton's
HTTP or metrics port given by mistake (refused). A gRPC server answers an HTTP/1.1 request with HTTP/2 frames."""
import socket

#: An HTTP/1.1 request; an HTTP/1.1 server's answer starts with HTTP_1.
PROBE = b"GET /v2/health/live HTTP/1.1\r\nHost: tritonkit-gateway\r\nConnection: close\r\n\r\n"
HTTP_1 = b"HTTP/1."


def host_port(url: str) -> tuple[str, int]:
    """(`host`, port) of `host:port` (an IPv6 host in brackets)."""
    host, _, port = url.rpartition(":")
    return host.strip("[]"), int(port)


def answers_http1(url: str, timeout: float = 2.0) -> bool:
    """Whether the server at `url` answers HTTP/1.1; raises OSError when nothing can be reached there."""
    with socket.create_connection(host_port(url), timeout=timeout) as connection:
        connection.sendall(PROBE)
        try:
            return connection.recv(len(HTTP_1)).startswith(HTTP_1)
        except OSError:   # connected but silent: whatever it is, not an HTTP/1.1 server
            return False
