"""The Triton container of the Kubernetes Deployment and the KServe ServingRuntime: args, probes, resources, security.

Readiness is Triton's own `GET /v2/health/ready`, run with `--strict-readiness=false` (triton/server_args.py's
KUBERNETES target): ready while Triton serves and not while it shuts down, so a model that loads later (a rollout's
new version, a model loaded by hand) does not take a serving pod out of its Service, as strict readiness would.
The models loaded at startup are covered by the startup probe: Triton opens its HTTP port only after the models
named with `--load-model` are loaded (and exits if one fails). Liveness asks `/v2/health/live` only, so Kubernetes
never restarts a pod for loading.
"""
from typing import Any

from tritonkit.deploy.sizing import PROBE_PERIOD_S, mebibytes
from tritonkit.deploy.target import Target
from tritonkit.errors import TritonkitError, shown_path
from tritonkit.triton.server_args import KUBERNETES, Launch, tritonserver_args


def server_args(t: Target, repository: str, http_port: int, grpc_port: int, metrics_port: int) -> list[str]:
    """tritonserver's arguments: explicit mode loading the spec's models (+ BLS callees) from `repository`. The admin
    key is a `$(VAR)` reference Kubernetes fills from the container's environment (a Secret), never in a manifest."""
    return tritonserver_args(KUBERNETES, Launch(
        repository, {"http": http_port, "grpc": grpc_port, "metrics": metrics_port}, loads=t.models,
        cache_bytes=t.cache_bytes, admin_key=f"$({t.admin_key_env})", log_verbose=t.project.deploy.log_verbose))


def probes(t: Target, http_port: int) -> dict[str, Any]:
    """startupProbe, livenessProbe and readinessProbe of the Triton container."""
    def get(path: str) -> dict[str, Any]:  # a fresh dict each time, so the YAML has no anchors
        return {"httpGet": {"path": path, "port": http_port}}

    return {
        "startupProbe": {**get("/v2/health/live"), "periodSeconds": PROBE_PERIOD_S, "timeoutSeconds": 5,
                         "failureThreshold": t.sizing.startup_failure_threshold},
        "livenessProbe": {**get("/v2/health/live"), "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
        "readinessProbe": {**get("/v2/health/ready"), "periodSeconds": 10, "timeoutSeconds": 5, "failureThreshold": 3},
    }


def resources(t: Target) -> dict[str, Any]:
    """Requests and limits (sizing.py says how each is derived); GPUs only when an instance group is KIND_GPU."""
    s = t.sizing
    sized = {"memory": mebibytes(s.memory_bytes), "ephemeral-storage": mebibytes(s.tmp_bytes)}  # requested = limit
    gpus = {"nvidia.com/gpu": s.gpus} if s.gpus else {}
    return {"requests": {"cpu": f"{s.cpu_millis}m", **sized}, "limits": {**sized, **gpus}}


def user_ids(t: Target) -> tuple[int, int]:
    """uid and gid from the spec's `deploy.user` (`1000:1000`); Kubernetes needs numbers to prove non-root."""
    uid, _, gid = t.project.deploy.user.partition(":")
    if not uid.isdigit() or not (gid or uid).isdigit() or int(uid) == 0:
        raise TritonkitError(shown_path(t.project.spec_path), "deploy.user",
                             f"{t.project.deploy.user!r} is not a non-root uid:gid",
                             "write numeric ids other than 0, e.g. 1000:1000")
    return int(uid), int(gid or uid)


def pod_security(t: Target) -> dict[str, Any]:
    """Pod-level securityContext: non-root ids, files the volumes create owned by the group."""
    uid, gid = user_ids(t)
    return {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid, "fsGroup": gid,
            "seccompProfile": {"type": "RuntimeDefault"}}


def container_security(t: Target) -> dict[str, Any]:
    """Container-level securityContext: read-only root, no capabilities, no privilege escalation."""
    uid, gid = user_ids(t)
    return {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": gid, "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}


def volumes(t: Target) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(volumes, mounts): /dev/shm in memory for the Python backend's tensors, /tmp for the downloaded repository."""
    s = t.sizing
    return ([{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": mebibytes(s.shm_bytes)}},
             {"name": "tmp", "emptyDir": {"sizeLimit": mebibytes(s.tmp_bytes)}}],
            [{"name": "shm", "mountPath": "/dev/shm"}, {"name": "tmp", "mountPath": "/tmp"}])


def env(t: Target) -> list[dict[str, Any]]:
    """Environment: the admin key from its Secret, HOME on the writable /tmp (the root filesystem is read-only)."""
    return [{"name": t.admin_key_env, "valueFrom": {"secretKeyRef": {"name": t.admin_secret, "key": "admin-key"}}},
            {"name": "HOME", "value": "/tmp"}]


def topology_spread(match_labels: dict[str, str]) -> list[dict[str, Any]]:
    """Replicas spread over nodes, then zones, so one node or zone going down takes as few as possible.

    ScheduleAnyway: a cluster with fewer nodes than replicas still runs them all (DoNotSchedule would leave
    the HPA's extra replicas pending). `matchLabelKeys: pod-template-hash` counts only the pods of the
    current revision, so a rollout does not skew the spread against the old pods.
    """
    def constraint(key: str) -> dict[str, Any]:
        return {"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": dict(match_labels)}, "matchLabelKeys": ["pod-template-hash"]}

    return [constraint("kubernetes.io/hostname"), constraint("topology.kubernetes.io/zone")]
