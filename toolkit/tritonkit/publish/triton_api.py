"""Triton's model-repository API over HTTP: load a model with a config override, per-version readiness.

The load request carries the config (Triton's `config` load parameter, JSON), so which versions a server
runs is decided by the request, not by whatever config.pbtxt the repository holds at that moment. When
the server restricts the repository API, the key comes from the environment and goes only into the
`admin-key` header; it is never logged or written.
"""
import json
import time
import urllib.error
import urllib.request

from google.protobuf import json_format

from tritonkit.errors import TritonkitError
from tritonkit.serve.health import LOCAL_OPENER, admin_header
from tritonkit.triton.model_config import pb


class ServerError(TritonkitError):
    """The server refused or failed a repository request; the message is Triton's own."""


def host_port(url: str) -> str:
    """`host:port` from `host:port` or `http://host:port/`."""
    return url.split("://", 1)[-1].rstrip("/")


class RepositoryApi:
    """One Triton server's HTTP endpoint."""

    def __init__(self, url: str, admin_key_env: str = "TRITON_ADMIN_KEY", timeout: float = 300.0) -> None:
        self.url = host_port(url)
        self.admin_key_env = admin_key_env
        self.timeout = timeout

    def _call(self, path: str, body: dict | None = None, timeout: float | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json", **admin_header(self.admin_key_env)}
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://{self.url}{path}", data=data, headers=headers,
                                         method="POST" if data is not None else "GET")
        try:
            with LOCAL_OPENER.open(request, timeout=timeout or self.timeout) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            raise ServerError(self.url, "", f"server does not answer ({type(exc).__name__})",
                              "check --server HOST:PORT (Triton's HTTP endpoint) and that it runs") from exc

    def load(self, model: str, config: pb.ModelConfig) -> None:
        """Loads `model` with `config` (its version_policy says which versions); returns once Triton has done it."""
        override = json_format.MessageToJson(config, preserving_proto_field_name=True, indent=None)
        status, body = self._call(f"/v2/repository/models/{model}/load", {"parameters": {"config": override}})
        if status != 200:
            reason = _reason(body, status)
            raise ServerError(self.url, model, f"load failed: {reason}", _fix(status, reason, self.admin_key_env))

    def version_ready(self, model: str, version: int) -> bool:
        return self._call(f"/v2/models/{model}/versions/{version}/ready", timeout=5.0)[0] == 200

    def wait_version_ready(self, model: str, version: int, timeout: float) -> None:
        """Per-model, per-version readiness (not the server's, which a load can flip)."""
        deadline = time.monotonic() + timeout
        while not self.version_ready(model, version):
            if time.monotonic() > deadline:
                raise ServerError(self.url, model, f"version {version} not ready within {timeout:.0f} s",
                                  "read the server log for the load error")
            time.sleep(0.2)

    def config(self, model: str) -> pb.ModelConfig:
        """The config the server runs `model` with."""
        status, body = self._call(f"/v2/models/{model}/config", timeout=10.0)
        if status != 200:
            raise ServerError(self.url, model, f"no config: {_reason(body, status)}",
                              "is the model loaded on this server?")
        return json_format.Parse(body, pb.ModelConfig(), ignore_unknown_fields=True)


def _reason(body: bytes, status: int) -> str:
    try:
        return str(json.loads(body).get("error", "")).strip() or f"HTTP {status}"
    except ValueError:
        return f"HTTP {status}"


def _fix(status: int, reason: str, key_env: str) -> str:
    if status in (401, 403):
        return f"the server restricts its model-repository API: set {key_env} to its admin key"
    if "polling is enabled" in reason:  # Triton's answer in model-control modes none and poll
        return "start the server with --model-control-mode=explicit (the previous version keeps serving)"
    return "read the server log for the details (the previous version keeps serving)"
