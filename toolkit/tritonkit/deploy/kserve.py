"""`tritonkit deploy kserve`: a pinned Triton ServingRuntime plus an InferenceService, sized like the Deployment.

KServe runs the container, so the sizing, probes, security context and explicit-mode arguments are
the ones `deploy k8s` uses; what differs is KServe's: the repository arrives at /mnt/models through
its storage initializer, HTTP is on 8080, and autoscaling goes through KEDA on a Prometheus query.
"""
from typing import Any

from tritonkit.deploy import pod
from tritonkit.deploy.k8s import pod_context, secret_steps
from tritonkit.deploy.manifests import Manifest, render
from tritonkit.deploy.scraping import PODMONITOR
from tritonkit.deploy.target import Target
from tritonkit.gateway import deployment as gateway_deployment

HTTP_PORT = 8080  # KServe's convention for the predictor container
GRPC_PORT = 9000
MODEL_DIR = "/mnt/models"  # where KServe's storage initializer puts storageUri
FILES = ["serviceaccount.yaml", "servingruntime.yaml", "inferenceservice.yaml"]
#: Written only when asked (--podmonitor, a gateway: section); a run without one removes an earlier run's.
OPTIONAL = (PODMONITOR, gateway_deployment.KSERVE_SERVICE)


def predictor_selector(t: Target) -> dict[str, str]:
    """Labels KServe puts on the InferenceService's predictor pods."""
    return {"serving.kserve.io/inferenceservice": t.name, "component": "predictor"}


def queue_ratio_query(t: Target) -> str:
    """PromQL for the queue/compute ratio of this InferenceService's predictor pods."""
    pods = f'pod=~"{t.name}-predictor-.*"'
    return (f"sum(rate(nv_inference_queue_duration_us{{{pods}}}[2m])) / "
            f"clamp_min(sum(rate(nv_inference_compute_infer_duration_us{{{pods}}}[2m])), 1)")


def context(t: Target) -> dict[str, Any]:
    metrics_port = t.project.deploy.metrics_port
    return {
        **pod_context(t), "kserve": True, "runtime": f"{t.name}-triton",
        "args": pod.server_args(t, MODEL_DIR, HTTP_PORT, GRPC_PORT, metrics_port), "http_port": HTTP_PORT,
        "metrics_port": metrics_port,
        "probes": pod.probes(t, HTTP_PORT), "query": queue_ratio_query(t), "monitor_selector": predictor_selector(t),
        "topology": pod.topology_spread(predictor_selector(t)),
        "gateway": gateway_deployment.sidecar(t.project.gateway, t.name, GRPC_PORT, t.s3_url, pod.container_security(t),
                                              t.s3_secret, taken={HTTP_PORT, GRPC_PORT, metrics_port})
        if t.project.gateway else None,
    }


def files(t: Target) -> list[str]:
    """The folder's files: the PodMonitor only with --podmonitor (its CRD must exist in the cluster)."""
    gateway = [gateway_deployment.KSERVE_SERVICE] if t.project.gateway else []
    return FILES + ([PODMONITOR] if t.options.podmonitor else []) + gateway


def manifests(t: Target, out_hint: str) -> list[Manifest]:
    """Every file of the output folder, rendered and parsed (not yet checked or written); `out_hint` is unused
    (no KServe file names its folder), taken so both targets have one signature."""
    ctx = context(t)
    return [render(f"{f}.j2", f, **ctx) for f in files(t)]


def next_steps(t: Target, out_hint: str) -> list[str]:
    """What to run after `deploy kserve`: the Secrets (the storage initializer reads the S3 one), then the apply."""
    return [*secret_steps(t), f"kubectl apply -f {out_hint} -n NAMESPACE", f"kubectl -n NAMESPACE get inferenceservice"
            f" {t.name}   # KEDA scales on the query through {t.options.prometheus_url}"]
