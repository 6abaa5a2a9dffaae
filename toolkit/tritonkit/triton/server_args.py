"""tritonserver's command line for every target (embedded serve, docker compose, Kubernetes, KServe) in one builder:
the targets' differences are data (`Target`), what the repository needs is a value (`Launch`)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `tritonkit serve` builds its command line before any config is parsed
    from tritonkit.triton.model_config import pb

#: Header that model load/unload requests carry in explicit mode (value: the admin key).
ADMIN_HEADER = "admin-key"
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Target:
    """A target's own flags, and the flag groups in the order it always wrote them (Triton takes any order; kept so
    the generated files did not change when the three builders became one)."""

    flags: tuple[str, ...]
    order: tuple[str, ...]


_START = ("program", "repository", "runtime", "control")
_CONTAINER = ("--exit-on-error=true", "--disable-auto-complete-config")  # a broken model stops it; no config guessed
#: docker-compose.yml, in the spec's control mode.
COMPOSE = Target(_CONTAINER, (*_START, "flags", "ports", "log", "loads", "admin", "poll", "cache"))
#: A Kubernetes Deployment and KServe's ServingRuntime run the same container: explicit, the models named; ready
#: while serving, whatever loads later (the readiness probe is /v2/health/ready: deploy/pod.py).
KUBERNETES = Target((*_CONTAINER, "--strict-readiness=false"), (*_START, "loads", "flags", "ports", "log", "admin",
                                                                 "cache"))
_SERVE = ("--exit-on-error=false", "--strict-readiness=true")  # runs on past a broken model to name them all
#: `tritonkit serve`, ready only when every model is.
EMBEDDED = Target(_SERVE, (*_START, "loads", "flags", "ports", "cache", "admin"))
#: What `tritonkit publish` suggests: explicit mode (for rollout) loading every model.
BY_HAND = Target((), (*_START, "loads"))
#: The wrapper `tritonkit tune` gives Model Analyzer, which adds the rest of the command line itself.
MODEL_ANALYZER = Target((), ("program", "runtime"))


@dataclass(frozen=True)
class Launch:
    """One server: its repository and ports, and what the repository needs."""

    repository: str
    ports: Mapping[str, int]  # http, grpc, metrics -> port
    control: str = "explicit"  # none | poll | explicit
    loads: Sequence[str] = ("*",)  # explicit mode: the models loaded at startup (BLS callees included)
    cache_bytes: int = 0  # response cache size (`response_cache_bytes`)
    admin_key: str | None = None  # restricts load/unload; spelled as the target substitutes it
    log_verbose: int | None = None
    host: str | None = None  # every endpoint's address (default: all interfaces)
    program: str = "tritonserver"
    runtime: tuple[str, str] | None = None  # (backend, cache) folders when not the image's /opt/tritonserver
    exit_timeout_s: int | None = None


def tritonserver_args(target: Target, launch: Launch) -> list[str]:
    """The program and its arguments: the one place tritonserver's flags are written."""
    explicit, key, runtime = launch.control == "explicit", launch.admin_key, launch.runtime  # load/unload: explicit
    groups = {
        "program": [launch.program],
        "repository": [f"--model-repository={launch.repository}"],
        "runtime": [f"--backend-directory={runtime[0]}", f"--cache-directory={runtime[1]}"] if runtime else [],
        "control": [f"--model-control-mode={launch.control}"],
        "loads": [f"--load-model={name}" for name in launch.loads] if explicit else [],
        "flags": [*target.flags, *([f"--exit-timeout-secs={launch.exit_timeout_s}"] if launch.exit_timeout_s else [])],
        "ports": [arg for endpoint, port in launch.ports.items() for arg in
                  [*([f"--{endpoint}-address={launch.host}"] if launch.host else []), f"--{endpoint}-port={port}"]],
        "log": [f"--log-verbose={launch.log_verbose}"] if launch.log_verbose is not None else [],
        "admin": [f"--http-restricted-api=model-repository:{ADMIN_HEADER}={key}",
                  f"--grpc-restricted-protocol=model-repository:{ADMIN_HEADER}={key}"] if key and explicit else [],
        "poll": ["--repository-poll-secs=30"] if launch.control == "poll" else [],
        "cache": [f"--cache-config=local,size={launch.cache_bytes}"] if launch.cache_bytes else [],
    }
    return [arg for group in target.order for arg in groups[group]]


def response_cache_bytes(configs: Iterable[pb.ModelConfig] | None, size: int = 0) -> int:
    """`size` (default 64 MiB) when any model enables the response cache (without `--cache-config` Triton 2.51 serves
    it with the cache silently off, also one loaded later), else 0; None (s3://, not read here) counts as one."""
    return (size or DEFAULT_CACHE_BYTES) if configs is None or any(c.response_cache.enable for c in configs) else 0
