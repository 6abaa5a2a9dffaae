"""Asks a running Triton over HTTP whether it is live and what state each model is in.

The repository index (`POST /v2/repository/index`) is the one place Triton gives every model's state with
its own reason for a failed load, so load failures are named from it rather than from the log.
"""
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass

from tritonkit.triton.server_args import ADMIN_HEADER

# Local endpoints must never go through an HTTP proxy from the environment.
LOCAL_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class ModelStatus:
    """One model version as the repository index reports it."""

    name: str
    version: str
    state: str
    reason: str = ""

    @property
    def ready(self) -> bool:
        return self.state == "READY"


def admin_header(key_env: str | None) -> dict[str, str]:
    """The header a restricted model-repository API wants, its key read from `key_env` at each request (never kept)."""
    key = os.environ.get(key_env) if key_env else None
    return {ADMIN_HEADER: key} if key else {}


def _request(url: str, data: bytes | None = None, timeout: float = 2.0,
             key_env: str | None = None) -> tuple[int, bytes]:
    method = "POST" if data is not None else "GET"
    req = urllib.request.Request(url, data=data, headers=admin_header(key_env), method=method)
    try:
        with LOCAL_OPENER.open(req, timeout=timeout) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
    except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
        return 0, b""


def is_live(http_url: str) -> bool:
    """`GET /v2/health/live`; True once the endpoints are up (after the initial load, in Triton 2.51)."""
    return _request(f"http://{http_url}/v2/health/live")[0] == 200


def repository_index(http_url: str, key_env: str | None = None) -> list[ModelStatus] | None:
    """Every model version the server knows, with state and reason; None if the server does not answer.
    `key_env`: where the admin key is, when the server restricts its model-repository API."""
    status, body = _request(f"http://{http_url}/v2/repository/index", data=b"{}", timeout=5.0, key_env=key_env)
    if status != 200:
        return None
    return [ModelStatus(name=item["name"], version=str(item.get("version", "")),
                        state=item.get("state", ""), reason=item.get("reason", ""))
            for item in json.loads(body)]


def _repository_action(http_url: str, model: str, action: str, timeout: float, key_env: str | None) -> tuple[bool, str]:
    """`POST /v2/repository/models/M/<action>` (explicit model control): (done, Triton's error message if not)."""
    status, body = _request(f"http://{http_url}/v2/repository/models/{model}/{action}", data=b"{}", timeout=timeout,
                            key_env=key_env)
    if status == 200:
        return True, ""
    try:
        return False, str(json.loads(body).get("error", body.decode(errors="replace")))
    except ValueError:
        return False, body.decode(errors="replace") or f"HTTP status {status}"


def load_model(http_url: str, model: str, timeout: float = 120.0, key_env: str | None = None) -> tuple[bool, str]:
    """Loads `model`; Triton does nothing for a model it already has loaded, even one whose stub died."""
    return _repository_action(http_url, model, "load", timeout, key_env)


def reload_model(http_url: str, model: str, timeout: float = 120.0, key_env: str | None = None) -> tuple[bool, str]:
    """Unloads then loads `model`, so that it gets new stubs: a load alone is a no-op while Triton still
    counts the model as loaded (a stub killed between requests: measured on 2.51)."""
    unloaded, detail = _repository_action(http_url, model, "unload", timeout, key_env)
    return load_model(http_url, model, timeout, key_env) if unloaded else (False, detail)
