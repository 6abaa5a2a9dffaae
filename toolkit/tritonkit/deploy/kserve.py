"""`tritonkit deploy kserve`: a pinned Triton ServingRuntime plus an InferenceService, sized like the Deployment.

KServe runs the container, so the sizing, probes, security context and explicit-mode arguments are
the ones `deploy k8s` uses; what differs is KServe's: the repository arrives at /mnt/models through
its storage initializer, HTTP is on 8080, and autoscaling goes through KEDA on a Prometheus query.
"""
from __future__ import annotations

from typing import Any

from tritonkit.deploy import pod
from tritonkit.deploy.k8s import pod_context
from tritonkit.deploy.manifests import Manifest, render
from tritonkit.deploy.target import Target

HTTP_PORT = 8080  # KServe's convention for the predictor container
GRPC_PORT = 9000
MODEL_DIR = "/mnt/models"  # where KServe's storage initializer puts storageUri
FILES = ["serviceaccount.yaml", "servingruntime.yaml", "inferenceservice.yaml"]


def queue_ratio_query(t: Target) -> str:
    """PromQL for the queue/compute ratio of this InferenceService's predictor pods."""
    pods = f'pod=~"{t.name}-predictor-.*"'
    return (f"sum(rate(nv_inference_queue_duration_us{{{pods}}}[2m])) / "
            f"clamp_min(sum(rate(nv_inference_compute_infer_duration_us{{{pods}}}[2m])), 1)")


def context(t: Target) -> dict[str, Any]:
    metrics_port = t.project.deploy.metrics_port
    return {
        **pod_context(t), "kserve": True, "runtime": f"{t.name}-triton",
        "args": pod.server_args(t, MODEL_DIR, HTTP_PORT, GRPC_PORT, metrics_port), "http_port": HTTP_PORT, "metrics_port": metrics_port,
        "probes": pod.probes(t, HTTP_PORT), "prometheus_url": t.options.prometheus_url, "query": queue_ratio_query(t),
    }


def kserve_manifests(t: Target) -> list[Manifest]:
    """Every file of the output folder, rendered and parsed (not yet checked or written)."""
    ctx = context(t)
    return [render(f"{f}.j2", f, **ctx) for f in FILES]
