"""tritonserver's command line for every target: embedded serve, docker compose, a Kubernetes Deployment and KServe.

One builder, `tritonserver_args`; what differs between targets is data (`Target`), what a repository needs is a
value the caller fills in (`Launch`: control mode, the models loaded at startup, the response cache).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: `tritonkit serve` builds its command line before any config is parsed
    from tritonkit.triton.model_config import pb

#: Header that model load/unload requests carry in explicit mode (value: the admin key).
ADMIN_HEADER = "admin-key"
#: `--cache-config` size when the spec gives none and a model enables the response cache.
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Target:
    """How one kind of target runs tritonserver: its own flags, and the flag groups in the order it has always
    written them (Triton takes them in any order; kept so the generated files did not change with one builder)."""

    flags: tuple[str, ...]
    order: tuple[str, ...]


_CONTAINER = ("--exit-on-error=true", "--disable-auto-complete-config")  # a broken model stops it; no config guessed
#: docker-compose.yml, in the spec's control mode.
COMPOSE = Target(_CONTAINER, ("start", "flags", "ports", "log", "loads", "admin", "poll", "cache"))
#: A Kubernetes Deployment and KServe's ServingRuntime (the same container): explicit, the models named.
KUBERNETES = Target(_CONTAINER, ("start", "loads", "flags", "ports", "log", "admin", "cache"))
#: `tritonkit serve`: runs on past a broken model to name them all; ready only when every model is.
EMBEDDED = Target(("--exit-on-error=false", "--strict-readiness=true"), ("start", "loads", "flags", "ports", "cache", "admin"))
#: The command `tritonkit publish` suggests: every model loaded in explicit mode (which alone loads none), for rollout.
BY_HAND = Target((), ("start", "loads"))


@dataclass(frozen=True)
class Launch:
    """One server's values: the repository, its ports and what the repository needs."""

    repository: str
    ports: Mapping[str, int]  # http, grpc, metrics -> port
    control: str = "explicit"  # none | poll | explicit
    loads: Sequence[str] = ("*",)  # explicit mode: the models loaded at startup (BLS callees included)
    cache_bytes: int = 0  # response cache size; 0: no model enables it
    admin_key: str | None = None  # restricts load/unload, spelled as the target substitutes it
    log_verbose: int | None = None
    host: str | None = None  # every endpoint's address; None: Triton's default (all interfaces)
    program: str = "tritonserver"
    runtime: tuple[str, str] | None = None  # (backend, cache) folders of a runtime not at /opt/tritonserver
    exit_timeout_s: int | None = None


def tritonserver_args(target: Target, launch: Launch) -> list[str]:
    """The program and its arguments for `launch` on `target`: the only place tritonserver's flags are written."""
    runtime = [f"--backend-directory={launch.runtime[0]}", f"--cache-directory={launch.runtime[1]}"] if launch.runtime else []
    explicit = launch.control == "explicit"  # load/unload requests exist only in explicit mode
    key = launch.admin_key
    groups = {
        "start": [launch.program, f"--model-repository={launch.repository}", *runtime, f"--model-control-mode={launch.control}"],
        "loads": [f"--load-model={name}" for name in launch.loads] if explicit else [],
        "flags": [*target.flags, *([f"--exit-timeout-secs={launch.exit_timeout_s}"] if launch.exit_timeout_s else [])],
        "ports": [arg for endpoint, port in launch.ports.items()
                  for arg in [*([f"--{endpoint}-address={launch.host}"] if launch.host else []), f"--{endpoint}-port={port}"]],
        "log": [f"--log-verbose={launch.log_verbose}"] if launch.log_verbose is not None else [],
        "admin": [f"--http-restricted-api=model-repository:{ADMIN_HEADER}={key}",
                  f"--grpc-restricted-protocol=model-repository:{ADMIN_HEADER}={key}"] if key and explicit else [],
        "poll": ["--repository-poll-secs=30"] if launch.control == "poll" else [],
        "cache": [f"--cache-config=local,size={launch.cache_bytes}"] if launch.cache_bytes else [],
    }
    return [arg for group in target.order for arg in groups[group]]


def response_cache_bytes(configs: Iterable[pb.ModelConfig] | None, size: int = 0) -> int:
    """`--cache-config`'s size: `size` (default 64 MiB) when any model of the repository enables the response cache
    (Triton 2.51 loads such a model only with the flag, at startup or later), else 0. None (an s3:// repository,
    not read here) counts as one that does."""
    if configs is None or any(config.response_cache.enable for config in configs):
        return size or DEFAULT_CACHE_BYTES
    return 0
